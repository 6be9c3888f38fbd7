# Source: https://github.com/snap-stanford/ogb/blob/61e9784ca76edeaa6e259ba0f836099608ff0586/examples/linkproppred/ddi/gnn.py
# Report: audit of the ogbl-ddi GNN example: test() is @torch.no_grad() and every batch of link scores is moved off the GPU inside the list literal (preds += [predictor(...).squeeze().cpu()]); this file keeps that shape
# Shape: full-graph GCN embedding plus an MLP link predictor, evaluated over positive and negative edge batches with list += [score.cpu()]; the per-run loop resets parameters and a logger keeps float hits per epoch
# Expect: near-miss: must be silent
import torch
from torch.utils.data import DataLoader
from torch_geometric.utils import negative_sampling


class Logger:
    def __init__(self, runs):
        self.results = [[] for _ in range(runs)]

    def add_result(self, run, result):
        self.results[run].append(result)

    def best(self, run):
        r = torch.tensor(self.results[run])
        return r[r[:, 0].argmax(), 1].item()


def train(model, predictor, emb, adj_t, edge_index, pos_train_edge, optimizer, batch_size):
    model.train()
    predictor.train()
    total_loss = total_examples = 0
    for perm in DataLoader(range(pos_train_edge.size(0)), batch_size, shuffle=True):
        optimizer.zero_grad()
        h = model(emb.weight, adj_t)
        edge = pos_train_edge[perm].t()
        pos_out = predictor(h[edge[0]], h[edge[1]])
        neg = negative_sampling(edge_index, num_nodes=emb.num_embeddings,
                                num_neg_samples=perm.size(0), method="dense")
        neg_out = predictor(h[neg[0]], h[neg[1]])
        loss = -torch.log(pos_out + 1e-15).mean() - torch.log(1 - neg_out + 1e-15).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(emb.weight, 1.0)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        torch.nn.utils.clip_grad_norm_(predictor.parameters(), 1.0)
        optimizer.step()
        total_loss += loss.item() * pos_out.size(0)
        total_examples += pos_out.size(0)
    return total_loss / total_examples


def hits_at_k(pos, neg, k=20):
    kth = torch.topk(neg, k)[0][-1]
    return (pos > kth).float().mean().item()


@torch.no_grad()
def test(model, predictor, emb, adj_t, split_edge, batch_size):
    model.eval()
    predictor.eval()
    h = model(emb.weight, adj_t)
    scores = {}
    for split in ("valid", "test"):
        pos_edge, neg_edge = split_edge[split]["edge"], split_edge[split]["edge_neg"]
        pos_preds, neg_preds = [], []
        for perm in DataLoader(range(pos_edge.size(0)), batch_size):
            e = pos_edge[perm].t()
            pos_preds += [predictor(h[e[0]], h[e[1]]).squeeze().cpu()]
        for perm in DataLoader(range(neg_edge.size(0)), batch_size):
            e = neg_edge[perm].t()
            neg_preds += [predictor(h[e[0]], h[e[1]]).squeeze().cpu()]
        scores[split] = hits_at_k(torch.cat(pos_preds), torch.cat(neg_preds))
    return scores["valid"], scores["test"]


def run_all(model, predictor, emb, adj_t, split_edge, runs=10, epochs=200, batch_size=64 * 1024, device="cuda"):
    edge_index = torch.stack(adj_t.coo()[:2][::-1], dim=0)
    split_edge = {s: {k: v.to(device) for k, v in d.items()} for s, d in split_edge.items()}
    logger = Logger(runs)
    for run in range(runs):
        torch.nn.init.xavier_uniform_(emb.weight)
        model.reset_parameters()
        predictor.reset_parameters()
        params = list(model.parameters()) + list(emb.parameters()) + list(predictor.parameters())
        optimizer = torch.optim.Adam(params, lr=0.005)
        for epoch in range(1, epochs + 1):
            loss = train(model, predictor, emb, adj_t, edge_index, split_edge["train"]["edge"], optimizer, batch_size)
            if epoch % 5 == 0:
                logger.add_result(run, test(model, predictor, emb, adj_t, split_edge, batch_size))
        print(f"run {run + 1}: last loss {loss:.4f}, test hits@20 at best valid {logger.best(run):.4f}")
    return logger
