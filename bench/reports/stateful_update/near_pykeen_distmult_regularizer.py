# Source: https://github.com/pykeen/pykeen/issues/1297
# Report: custom DistMult training loop ran out of GPU memory because the regularizer's accumulated term was never collected; maintainers' fix: pop the term every step and add it to the loss
# Shape: same regularizer and forward; the training loop now calls pop_regularization_term() each batch, which hands the term to the loss and resets the buffer, so only one batch's term is alive
# Expect: near-miss: must be silent
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
        # the term is parked on the regularizer until the step pops it
        self.regularizer.update(h, r, t)
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
            loss = margin_loss(pos_scores, neg_scores, target)
            # collect (and reset) the accumulated term once per step
            loss = loss + model.regularizer.pop_regularization_term()
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item()
        print(f"epoch {epoch}: loss {epoch_loss:.4f}")
    return model
