# Source: https://github.com/Jay-Montgomery-Johnson/Enzyme_Classification/blob/7653327f5a2e74de277b3c8f59382e7aac82785f/train.py
# Report: audited bug: the ENZYMES protein-graph GCN's test(loader) calls model.eval() and runs every batch through the GCN with autograd still on (no torch.no_grad), so each evaluation batch saves activations for a backward that never comes
# Shape: same train()/test() pair around a 3-layer GCNConv + global_mean_pool classifier; test() is called on train and test loaders every epoch, forward pass outside any grad-disabled context
# Expect: TML003 line 52
import torch
import torch.nn.functional as F
from torch_geometric.datasets import TUDataset
from torch_geometric.loader import DataLoader
from torch_geometric.nn import GCNConv, Linear, global_mean_pool

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class GCN(torch.nn.Module):
    def __init__(self, in_channels=6, hidden=32, num_classes=6):
        super().__init__()
        self.conv1 = GCNConv(in_channels, hidden)
        self.conv2 = GCNConv(hidden, hidden)
        self.conv3 = GCNConv(hidden, hidden)
        self.classifier = Linear(hidden, num_classes)

    def forward(self, x, edge_index, batch):
        h = self.conv1(x, edge_index).tanh()
        h = self.conv2(h, edge_index).tanh()
        h = self.conv3(h, edge_index).tanh()
        h = global_mean_pool(h, batch)
        h = F.dropout(h, p=0.5, training=self.training)
        return self.classifier(h)


model = GCN().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
criterion = torch.nn.CrossEntropyLoss()


def train(train_loader):
    model.train()
    for data in train_loader:
        data = data.to(device)
        out = model(data.x, data.edge_index, data.batch)
        loss = criterion(out, data.y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def test(loader):
    model.eval()
    correct = 0
    for data in loader:
        data = data.to(device)
        out = model(data.x, data.edge_index, data.batch)  # expect: TML003
        pred = out.argmax(dim=1)
        correct += int((pred == data.y).sum())
    return correct / len(loader.dataset)


def main():
    dataset = TUDataset(root="data/TUDataset", name="ENZYMES").shuffle()
    train_loader = DataLoader(dataset[:480], batch_size=64, shuffle=True)
    test_loader = DataLoader(dataset[480:], batch_size=64)
    for epoch in range(1, 201):
        train(train_loader)
        train_acc = test(train_loader)
        test_acc = test(test_loader)
        print(f"Epoch {epoch:03d} train {train_acc:.4f} test {test_acc:.4f}")


if __name__ == "__main__":
    main()
