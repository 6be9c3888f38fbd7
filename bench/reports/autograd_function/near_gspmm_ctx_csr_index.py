# Source: https://github.com/ytgui/HGL-proto/blob/12278b13001ed1873cb296af10fd16434c257764/sageir/sparse.py
# Report: custom sparse-graph autograd Functions (GSPMM / GSDDMM) keep the CSR index tensors of the adjacency as plain ctx attributes (ctx.adj_sparse = adj_sparse) next to save_for_backward
# Shape: fixed: every tensor the backward needs (index tensors included) goes through ctx.save_for_backward; only a Python int (row count) stays a ctx attribute
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd


def _csr(indptr, indices, values, n_cols):
    return torch.sparse_csr_tensor(indptr, indices, values, size=(indptr.numel() - 1, n_cols))


class GSpMM(autograd.Function):
    @staticmethod
    def forward(ctx, indptr, indices, edge_values, x):
        adj = _csr(indptr, indices, edge_values, x.size(0))
        ctx.n_rows = indptr.numel() - 1
        ctx.save_for_backward(indptr, indices, edge_values, x)
        return adj @ x

    @staticmethod
    def backward(ctx, grad_out):
        indptr, indices, edge_values, x = ctx.saved_tensors
        rows = torch.repeat_interleave(torch.arange(ctx.n_rows, device=x.device), indptr.diff())
        grad_values = (grad_out[rows] * x[indices]).sum(-1)
        adj_t = _csr(indptr, indices, edge_values, x.size(0)).to_dense().t()
        return None, None, grad_values, adj_t @ grad_out.contiguous()


class GSDDMM(autograd.Function):
    @staticmethod
    def forward(ctx, indptr, indices, query, key):
        rows = torch.repeat_interleave(torch.arange(indptr.numel() - 1, device=query.device), indptr.diff())
        scores = (query[rows] * key[indices]).sum(-1)
        ctx.save_for_backward(rows, indices, query, key)
        return scores

    @staticmethod
    def backward(ctx, grad_scores):
        rows, cols, query, key = ctx.saved_tensors
        g = grad_scores.unsqueeze(-1)
        grad_q = torch.zeros_like(query).index_add_(0, rows, g * key[cols])
        grad_k = torch.zeros_like(key).index_add_(0, cols, g * query[rows])
        return None, None, grad_q, grad_k


class SparseGATLayer(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.q = nn.Linear(in_dim, out_dim)
        self.k = nn.Linear(in_dim, out_dim)
        self.v = nn.Linear(in_dim, out_dim)

    def forward(self, block, x):
        scores = GSDDMM.apply(block["indptr"], block["indices"], self.q(x), self.k(x))
        weights = torch.sigmoid(scores)
        return F.elu(GSpMM.apply(block["indptr"], block["indices"], weights, self.v(x)))


def train_node_classifier(block, feats, labels, train_mask, n_classes, epochs=200, device="cuda"):
    block = {k: v.to(device) for k, v in block.items()}
    feats, labels, train_mask = feats.to(device), labels.to(device), train_mask.to(device)
    layer = SparseGATLayer(feats.size(1), 64).to(device)
    head = nn.Linear(64, n_classes).to(device)
    opt = torch.optim.Adam(list(layer.parameters()) + list(head.parameters()), lr=5e-3)
    for epoch in range(epochs):
        opt.zero_grad()
        logits = head(layer(block, feats))
        loss = F.cross_entropy(logits[train_mask], labels[train_mask])
        loss.backward()
        opt.step()
        if epoch % 20 == 0:
            print(f"epoch {epoch} loss {loss.item():.4f}")
    return layer, head
