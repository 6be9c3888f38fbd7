# Source: https://github.com/samar-khanna/cs224w-project/blob/613b53a629343694127104f53f48d998ccb205e9/gists/evaluate.py
# Report: the link-prediction test() calls model.eval() but runs the GNN and the edge predictor with grad enabled, then keeps `predictor(...).squeeze().cpu()` for every edge batch in pos/neg lists, so the .cpu() copies pin the whole node-embedding graph on the GPU until Hits@K is computed
# Shape: fixed as the OGB example does it: test() and the edge-scoring helper are decorated with @torch.no_grad(), so the list holds plain CPU scores
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader


class SAGE(nn.Module):
    def __init__(self, dim, hidden, layers=3):
        super().__init__()
        dims = [dim] + [hidden] * layers
        self.lins = nn.ModuleList(nn.Linear(2 * a, b) for a, b in zip(dims[:-1], dims[1:]))

    def forward(self, x, edge_index):
        src, dst = edge_index
        for i, lin in enumerate(self.lins):
            agg = torch.zeros_like(x).index_add_(0, dst, x[src])
            x = lin(torch.cat([x, agg], dim=-1))
            if i < len(self.lins) - 1:
                x = F.relu(x)
        return x


class LinkPredictor(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, h_i, h_j):
        return torch.sigmoid(self.mlp(h_i * h_j))


@torch.no_grad()
def predict_edges(predictor, node_emb, edges, batch_size):
    preds = []
    for perm in DataLoader(range(edges.size(0)), batch_size):
        edge = edges[perm].t()
        preds += [predictor(node_emb[edge[0]], node_emb[edge[1]]).squeeze().cpu()]
    return torch.cat(preds, dim=0)


@torch.no_grad()
def test(model, predictor, emb, edge_index, split_edge, batch_size, evaluator):
    model.eval()
    predictor.eval()
    node_emb = model(emb, edge_index)
    pos_edges = split_edge["test"]["edge"].to(emb.device)
    neg_edges = split_edge["test"]["edge_neg"].to(emb.device)
    pos_pred = predict_edges(predictor, node_emb, pos_edges, batch_size)
    neg_pred = predict_edges(predictor, node_emb, neg_edges, batch_size)
    results = {}
    for k in (20, 50, 100):
        evaluator.K = k
        hits = evaluator.eval({"y_pred_pos": pos_pred, "y_pred_neg": neg_pred})[f"hits@{k}"]
        results[f"Hits@{k}"] = hits
    return results
