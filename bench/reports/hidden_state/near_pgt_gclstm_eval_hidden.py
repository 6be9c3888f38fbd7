# Source: https://github.com/benedekrozemberczki/pytorch_geometric_temporal/blob/master/examples/recurrent/gclstm_example.py
# Report: PyG-Temporal's GCLSTM example evaluates over the test snapshots after model.eval(), carrying (h, c) across snapshots and summing the MSE into cost; fixed as the maintainers advised in issue #159: evaluation under torch.no_grad()
# Shape: the training loop resets h, c and cost every epoch and backpropagates the summed cost once (intended full-sequence BPTT); the test loop carries h, c and sums cost inside `with torch.no_grad():`, so nothing there holds a graph and cost.item() closes it
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from tqdm import tqdm
from torch_geometric.nn import ChebConv


class GCLSTMCell(torch.nn.Module):
    """LSTM cell whose hidden-to-hidden map is a Chebyshev graph convolution."""

    def __init__(self, in_channels, out_channels, K):
        super().__init__()
        self.out_channels = out_channels
        self.lin_x = torch.nn.Linear(in_channels, 4 * out_channels)
        self.conv_h = ChebConv(out_channels, 4 * out_channels, K)

    def forward(self, x, edge_index, edge_weight, h, c):
        if h is None:
            h = x.new_zeros(x.size(0), self.out_channels)
            c = x.new_zeros(x.size(0), self.out_channels)
        gates = self.lin_x(x) + self.conv_h(h, edge_index, edge_weight)
        i, f, g, o = gates.chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return h, c


class RecurrentGCN(torch.nn.Module):
    def __init__(self, node_features):
        super().__init__()
        self.recurrent = GCLSTMCell(node_features, 32, 1)
        self.linear = torch.nn.Linear(32, 1)

    def forward(self, x, edge_index, edge_weight, h, c):
        h_0, c_0 = self.recurrent(x, edge_index, edge_weight, h, c)
        out = self.linear(F.relu(h_0))
        return out, h_0, c_0


def train_and_test(train_dataset, test_dataset, epochs=200):
    model = RecurrentGCN(node_features=4)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    model.train()
    for epoch in tqdm(range(epochs)):
        cost = 0
        h, c = None, None
        for time, snapshot in enumerate(train_dataset):
            y_hat, h, c = model(snapshot.x, snapshot.edge_index, snapshot.edge_attr, h, c)
            cost = cost + torch.mean((y_hat - snapshot.y) ** 2)
        cost = cost / (time + 1)
        cost.backward()
        optimizer.step()
        optimizer.zero_grad()

    model.eval()
    cost = 0
    with torch.no_grad():
        for time, snapshot in enumerate(test_dataset):
            y_hat, h, c = model(snapshot.x, snapshot.edge_index, snapshot.edge_attr, h, c)
            cost = cost + torch.mean((y_hat - snapshot.y) ** 2)
    cost = cost / (time + 1)
    cost = cost.item()
    print("MSE: {:.4f}".format(cost))
    return cost
