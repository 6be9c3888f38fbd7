# Source: https://github.com/pykeen/pykeen/issues/1297
# Report: custom DistMult training loop (forward + loss called by hand) runs out of GPU memory after some epochs: the default LpRegularizer keeps summing the per-batch term on self and nothing ever pops/resets it
# Shape: the entity/relation embeddings are handed to regularizer.update() inside forward; update() does self.regularization_term = self.regularization_term + term, so every batch's graph is chained on the module
# Expect: TML001 line 48
import torch
from torch import nn
from torch.nn import functional


class LpRegularizer(nn.Module):
    """Keeps a running regularization term between explicit pops."""

    def __init__(self, weight: float = 1.0, p: float = 2.0):
        super().__init__()
        self.register_buffer("weight", torch.as_tensor(weight))
        self.register_buffer("regularization_term", torch.zeros(1))
        self.p = p

    def reset(self):
        self.regularization_term = torch.zeros(1, device=self.weight.device)

    def forward(self, x):
        return torch.linalg.vector_norm(x, ord=self.p, dim=-1).mean()

    def update(self, *tensors):
        if not self.training or not torch.is_grad_enabled():
            return
        self.regularization_term = self.regularization_term + sum(self.forward(x) for x in tensors)

    def pop_regularization_term(self):
        term = self.regularization_term
        self.reset()
        return self.weight * term


class DistMult(nn.Module):
    def __init__(self, num_entities: int, num_relations: int, dim: int = 200):
        super().__init__()
        self.entity_embeddings = nn.Embedding(num_entities, dim)
        self.relation_embeddings = nn.Embedding(num_relations, dim)
        self.regularizer = LpRegularizer(weight=0.01)

    def forward(self, hrt_batch):
        h = self.entity_embeddings(hrt_batch[:, 0])
        r = self.relation_embeddings(hrt_batch[:, 1])
        t = self.entity_embeddings(hrt_batch[:, 2])
        # the term is parked on the regularizer until somebody pops it
        self.regularizer.update(h, r, t)  # expect: TML001
        return (h * r * t).sum(dim=-1)


def corrupt_tails(hrt_batch, num_entities):
    neg = hrt_batch.clone()
    neg[:, 2] = torch.randint(num_entities, (neg.shape[0],), device=neg.device)
    return neg


def train(model, triples, num_entities, epochs=100, batch_size=1024, device="cuda"):
    model.to(device).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    margin_loss = nn.MarginRankingLoss(margin=1.0)
    for epoch in range(epochs):
        perm = torch.randperm(triples.shape[0])
        epoch_loss = 0.0
        for start in range(0, triples.shape[0], batch_size):
            pos = triples[perm[start:start + batch_size]].to(device)
            neg = corrupt_tails(pos, num_entities)
            optimizer.zero_grad()
            pos_scores = model(pos)
            neg_scores = model(neg)
            target = torch.ones_like(pos_scores)
            # forward() and the loss are called by hand, as in the report:
            # the regularizer's accumulated term is never collected
            loss = margin_loss(pos_scores, neg_scores, target)
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item()
        print(f"epoch {epoch}: loss {epoch_loss:.4f}")
    return model
