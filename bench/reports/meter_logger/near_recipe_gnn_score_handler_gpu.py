# Source: https://github.com/rtr-x8/VINGAT/blob/e20602025e1d8d95146e2a1dc65d0f28fa8683bf/vingat/metrics.py
# Report: audit of the recipe-recommendation GNN evaluation: ScoreMetricHandler / MetricsHandler.update detach each user's positive and 500 negative scores but append them with .to(self.device) (the GPU), so the scores, targets and user ids of every validation user pile up on the device until compute()
# Shape: fixed: the same two handlers and per-user update(...) calls under no_grad, but update() moves each chunk to the CPU (.detach().cpu()) before appending, and compute() concatenates the CPU chunks once
# Expect: near-miss: must be silent
import torch
from torchmetrics.classification import BinaryAUROC
from torchmetrics.retrieval import RetrievalNormalizedDCG, RetrievalRecall


class ScoreStatsHandler:
    def __init__(self):
        self.pos_scores, self.neg_scores = [], []

    def update(self, pos_scores, neg_scores):
        self.pos_scores.append(pos_scores.detach().cpu())
        self.neg_scores.append(neg_scores.detach().cpu())

    def compute(self):
        pos, neg = torch.cat(self.pos_scores), torch.cat(self.neg_scores)
        return {"pos_mean": pos.mean().item(), "neg_mean": neg.mean().item(),
                "diff_mean": (pos.mean() - neg.mean()).item()}


class RankingHandler:
    def __init__(self):
        self.probas, self.targets, self.users = [], [], []

    def update(self, probas, targets, user_ids):
        self.probas.append(probas.detach().cpu())
        self.targets.append(targets.cpu())
        self.users.append(user_ids.cpu())

    def compute(self):
        probas, targets = torch.cat(self.probas), torch.cat(self.targets).long()
        users = torch.cat(self.users)
        return {
            "recall@10": RetrievalRecall(top_k=10)(probas, targets, indexes=users).item(),
            "ndcg@10": RetrievalNormalizedDCG(top_k=10)(probas, targets, indexes=users).item(),
            "auroc": BinaryAUROC()(probas, targets).item(),
        }


def sample_negatives(pos_items, n_items, k, device):
    cand = torch.randint(0, n_items, (k * 2,), device=device)
    cand = cand[~torch.isin(cand, pos_items)]
    return cand[:k]


def evaluate(model, graph, device, n_neg=500):
    model.eval()
    scores = ScoreStatsHandler()
    ranking = RankingHandler()
    with torch.no_grad():
        graph = graph.to(device)
        out = model(graph)
        users_emb, items_emb = out["user"].x, out["item"].x
        pairs = graph["user", "buys", "item"].edge_label_index
        for user_id in pairs[0].unique().tolist():
            pos_items = pairs[1][pairs[0] == user_id]
            if pos_items.numel() == 0:
                continue
            neg_items = sample_negatives(pos_items, items_emb.size(0), n_neg, device)
            u = users_emb[user_id]
            pos = model.predict(u.expand(len(pos_items), -1), items_emb[pos_items]).squeeze(1)
            neg = model.predict(u.expand(len(neg_items), -1), items_emb[neg_items]).squeeze(1)
            scores.update(pos, neg)
            ranking.update(
                torch.cat([pos, neg]),
                torch.cat([torch.ones_like(pos), torch.zeros_like(neg)]),
                torch.full((len(pos) + len(neg),), user_id, device=device),
            )
    return {**scores.compute(), **ranking.compute()}
