# Source: https://github.com/huluxiaohuowa/hdl/blob/293e0bb5d25e05f1f95db8dd05c0f4c7203df33d/hdl/controllers/train/train.py
# Report: audit of a molecular-property GNN script: train() returns the last batch's RMSE loss tensor (still carrying its grad_fn, on the GPU) and the 2000-epoch loop appends it to `losses`; the tensors are only turned into floats after training, for the plot
# Shape: a helper runs one epoch and returns (loss, embedding) as tensors; the epoch loop appends the returned loss to a history list bound before the loop
# Expect: TML001 line 53
import seaborn as sns
import torch
from torch_geometric.loader import DataLoader
from torch_geometric.nn import GCNConv, global_max_pool, global_mean_pool


class SolubilityGCN(torch.nn.Module):
    def __init__(self, num_features, hidden=64):
        super().__init__()
        self.initial = GCNConv(num_features, hidden)
        self.conv1 = GCNConv(hidden, hidden)
        self.conv2 = GCNConv(hidden, hidden)
        self.out = torch.nn.Linear(hidden * 2, 1)

    def forward(self, x, edge_index, batch_index):
        h = torch.tanh(self.initial(x, edge_index))
        h = torch.tanh(self.conv1(h, edge_index))
        h = torch.tanh(self.conv2(h, edge_index))
        pooled = torch.cat([global_max_pool(h, batch_index),
                            global_mean_pool(h, batch_index)], dim=1)
        return self.out(pooled), pooled


def train_one_epoch(model, loader, optimizer, loss_fn, device):
    model.train()
    for batch in loader:
        batch = batch.to(device)
        optimizer.zero_grad()
        pred, embedding = model(batch.x.float(), batch.edge_index, batch.batch)
        loss = torch.sqrt(loss_fn(pred, batch.y.view(-1, 1)))
        loss.backward()
        optimizer.step()
    # the last batch's tensors go back to the caller as they are
    return loss, embedding


def main(dataset, epochs=2000, batch_size=64):
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    model = SolubilityGCN(dataset.num_features).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=7e-4)
    loss_fn = torch.nn.MSELoss()
    split = int(len(dataset) * 0.8)
    loader = DataLoader(dataset[:split], batch_size=batch_size, shuffle=True)

    print("Starting training...")
    losses = []
    for epoch in range(epochs):
        loss, h = train_one_epoch(model, loader, optimizer, loss_fn, device)
        losses.append(loss)  # expect: TML001
        if epoch % 100 == 0:
            print(f"Epoch {epoch} | Train Loss {loss}")

    # converted only here, after every epoch's tensor has been kept alive
    losses_float = [float(l.cpu().detach().numpy()) for l in losses]
    sns.lineplot(x=list(range(len(losses_float))), y=losses_float)
    return model, h
