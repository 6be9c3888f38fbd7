# Source: https://github.com/sheldonresearch/ProG/blob/1322f8a75e240389c99c2ea2c1892be897b61daf/ProG/tasker/graph_task.py
# Report: audit of a graph-prompt-learning task class: GraphTask.test(loader) runs the GNN, the prompt and the answering head over the val and test loaders every epoch with autograd on (no torch.no_grad, and eval() only when there is no prompt), only counting correct predictions
# Shape: a Tasker class whose test method forwards prompt + GNN + answering head on every val/test batch; each batch builds a full autograd graph that is dropped only when out is rebound
# Expect: TML003 line 63
import torch
from torch import nn, optim
from torch_geometric.loader import DataLoader
from torch_geometric.nn import GCNConv, global_mean_pool


class GCN(nn.Module):
    def __init__(self, input_dim, hid_dim):
        super().__init__()
        self.conv1 = GCNConv(input_dim, hid_dim)
        self.conv2 = GCNConv(hid_dim, hid_dim)

    def forward(self, x, edge_index, batch):
        h = torch.relu(self.conv1(x, edge_index))
        h = torch.relu(self.conv2(h, edge_index))
        return global_mean_pool(h, batch)


class GPF(nn.Module):
    """Graph prompt feature: one learnable vector added to every node."""

    def __init__(self, in_channels):
        super().__init__()
        self.global_emb = nn.Parameter(torch.zeros(1, in_channels))

    def add(self, x):
        return x + self.global_emb


class GraphTask:
    def __init__(self, gnn, input_dim, hid_dim, output_dim, datasets, epochs=100, device="cuda"):
        self.device = device
        self.gnn = gnn.to(device)
        self.prompt = GPF(input_dim).to(device)
        self.answering = nn.Sequential(nn.Linear(hid_dim, output_dim), nn.Softmax(dim=1)).to(device)
        self.train_dataset, self.val_dataset, self.test_dataset = datasets
        self.epochs = epochs
        params = list(self.prompt.parameters()) + list(self.answering.parameters())
        self.optimizer = optim.Adam(params, lr=0.005, weight_decay=5e-4)
        self.criterion = nn.CrossEntropyLoss()

    def gpf_train(self, train_loader):
        self.prompt.train()
        total_loss = 0.0
        for batch in train_loader:
            self.optimizer.zero_grad()
            batch = batch.to(self.device)
            out = self.answering(self.gnn(self.prompt.add(batch.x), batch.edge_index, batch.batch))
            loss = self.criterion(out, batch.y)
            loss.backward()
            self.optimizer.step()
            total_loss += loss.item()
        return total_loss / len(train_loader)

    def test(self, loader):
        correct = 0
        for batch in loader:
            batch = batch.to(self.device)
            out = self.answering(self.gnn(self.prompt.add(batch.x), batch.edge_index, batch.batch))  # expect: TML003
            pred = out.argmax(dim=1)
            correct += int((pred == batch.y).sum())
        return correct / len(loader.dataset)

    def run(self):
        train_loader = DataLoader(self.train_dataset, batch_size=16, shuffle=True)
        val_loader = DataLoader(self.val_dataset, batch_size=16, shuffle=False)
        test_loader = DataLoader(self.test_dataset, batch_size=16, shuffle=False)
        best_val_acc = final_test_acc = 0.0
        for epoch in range(1, self.epochs):
            loss = self.gpf_train(train_loader)
            val_acc = self.test(val_loader)
            test_acc = self.test(test_loader)
            if val_acc > best_val_acc:
                best_val_acc, final_test_acc = val_acc, test_acc
            print(f"Epoch {epoch:03d} | Loss {loss:.4f} | val {val_acc:.4f} | test {test_acc:.4f}")
        print(f"Final Test: {final_test_acc:.4f}")
        return final_test_acc
