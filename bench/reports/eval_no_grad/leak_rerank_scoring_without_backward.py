# Source: https://discuss.pytorch.org/t/calling-loss-backward-reduce-memory-usage/2735
# Report: a loop that only runs the forward pass (no backward) used about twice the memory of one step: each output keeps its whole graph and saved activations alive until the name is rebound in the next iteration; inference should run without building the graph (volatile inputs then, no_grad now)
# Shape: a cross-encoder reranker scores query/passage batches after model.eval() but with autograd on, so every batch saves activations for a backward that never comes and the previous batch's graph is still alive while the next one is built
# Expect: TML003 line 39
from dataclasses import dataclass, field

import torch
import torch.nn as nn


@dataclass
class RankedList:
    query_id: str
    passage_ids: list = field(default_factory=list)
    scores: list = field(default_factory=list)

    def top(self, k=10):
        order = sorted(range(len(self.scores)), key=lambda i: -self.scores[i])[:k]
        return [(self.passage_ids[i], self.scores[i]) for i in order]


class CrossEncoder(nn.Module):
    def __init__(self, backbone, hidden):
        super().__init__()
        self.backbone = backbone
        self.score_head = nn.Linear(hidden, 1)

    def forward(self, input_ids, attention_mask):
        hidden = self.backbone(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return self.score_head(hidden[:, 0]).squeeze(-1)


def rerank(model, loader, device="cuda"):
    model.eval()
    results = {}
    for batch in loader:
        input_ids = batch["input_ids"].to(device)
        attention_mask = batch["attention_mask"].to(device)
        logits = model(input_ids, attention_mask)  # expect: TML003
        scores = torch.sigmoid(logits).tolist()
        for qid, pid, score in zip(batch["query_id"], batch["passage_id"], scores):
            ranked = results.setdefault(qid, RankedList(qid))
            ranked.passage_ids.append(pid)
            ranked.scores.append(score)
    return results


def mrr_at_10(results, qrels):
    total = 0.0
    for qid, ranked in results.items():
        for rank, (pid, _) in enumerate(ranked.top(10), start=1):
            if pid in qrels.get(qid, ()):
                total += 1.0 / rank
                break
    return total / max(len(results), 1)
