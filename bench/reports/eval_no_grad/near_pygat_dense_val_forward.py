# Source: https://github.com/Diego999/pyGAT/blob/3664f2dc90cbf971564c0bf186dc794f12446d0c/train.py
# Report: audit of pyGAT's train.py, whose validation and test forwards of the dense GAT ran with grad enabled after model.eval(); fixed by disabling autograd for them
# Shape: the same full-batch GAT script; the validation forward after backward/step is wrapped in `with torch.no_grad()` and compute_test() is decorated with @torch.no_grad()
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F

from utils import load_data, accuracy

FASTMODE, EPOCHS, PATIENCE = False, 10000, 100
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class GraphAttentionLayer(nn.Module):
    # dense layer: materialises the full N x N attention matrix per head
    def __init__(self, in_features, out_features, dropout, alpha, concat=True):
        super().__init__()
        self.dropout, self.concat = dropout, concat
        self.W = nn.Linear(in_features, out_features, bias=False)
        self.a = nn.Parameter(torch.empty(2 * out_features, 1))
        nn.init.xavier_uniform_(self.a, gain=1.414)
        self.leakyrelu = nn.LeakyReLU(alpha)

    def forward(self, h, adj):
        Wh = self.W(h)
        e = self.leakyrelu(Wh @ self.a[: Wh.size(1)] + (Wh @ self.a[Wh.size(1):]).T)
        attention = torch.where(adj > 0, e, torch.full_like(e, -9e15)).softmax(dim=1)
        attention = F.dropout(attention, self.dropout, training=self.training)
        h_prime = attention @ Wh
        return F.elu(h_prime) if self.concat else h_prime


class GAT(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout=0.6, alpha=0.2, nheads=8):
        super().__init__()
        self.dropout = dropout  # same rate on inputs, attention and hidden units
        self.heads = nn.ModuleList([GraphAttentionLayer(nfeat, nhid, dropout, alpha) for _ in range(nheads)])
        self.out_att = GraphAttentionLayer(nhid * nheads, nclass, dropout, alpha, concat=False)

    def forward(self, x, adj):
        x = F.dropout(x, self.dropout, training=self.training)
        x = torch.cat([att(x, adj) for att in self.heads], dim=1)
        x = F.dropout(x, self.dropout, training=self.training)
        return F.log_softmax(F.elu(self.out_att(x, adj)), dim=1)


adj, features, labels, idx_train, idx_val, idx_test = [t.to(device) for t in load_data()]
model = GAT(features.shape[1], 8, int(labels.max()) + 1).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=0.005, weight_decay=5e-4)


def train(epoch):
    model.train()
    optimizer.zero_grad()
    output = model(features, adj)
    loss_train = F.nll_loss(output[idx_train], labels[idx_train])
    loss_train.backward()
    optimizer.step()
    if not FASTMODE:
        model.eval()
        with torch.no_grad():
            output = model(features, adj)
    loss_val = F.nll_loss(output[idx_val], labels[idx_val])
    acc_val = accuracy(output[idx_val], labels[idx_val])
    print(f"epoch {epoch + 1:04d} loss_train {loss_train.item():.4f} loss_val {loss_val.item():.4f} acc_val {acc_val.item():.4f}")
    return loss_val.item()


@torch.no_grad()
def compute_test():
    model.eval()
    output = model(features, adj)
    loss_test = F.nll_loss(output[idx_test], labels[idx_test])
    acc_test = accuracy(output[idx_test], labels[idx_test])
    print(f"test loss {loss_test.item():.4f} accuracy {acc_test.item():.4f}")


best, bad_counter = float("inf"), 0
for epoch in range(EPOCHS):
    loss_val = train(epoch)
    bad_counter = 0 if loss_val < best else bad_counter + 1
    if loss_val < best:
        best = loss_val
        torch.save(model.state_dict(), "best_gat.pkl")
    if bad_counter == PATIENCE:
        break
model.load_state_dict(torch.load("best_gat.pkl", map_location=device))
compute_test()
