# Source: https://github.com/Mattdl/ContinualPrototypeEvolution/blob/4243a1dcb0fbd96819fc464e448da652bb448692/model/prototypical/p_scheme.py
# Report: audit of CoPE's prototype update: each class prototype is a momentum average of the batch mean of L2-normalised embeddings, and the repo runs that update under torch.no_grad() (PrototypeScheme.__call__), so stored prototypes carry no graph
# Shape: same ContinualLearner.observe(); the rebinding of self.prototypes[c] from its own previous value sits inside a with torch.no_grad() block, as the repo wraps its p_update
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class ContinualLearner(nn.Module):
    """Online continual learner that classifies by the nearest class prototype."""

    def __init__(self, encoder, emb_dim, p_momentum=0.99, temperature=0.1, n_iter=1):
        super().__init__()
        self.net = encoder
        self.emb_dim = emb_dim
        self.p_momentum = p_momentum
        self.temperature = temperature
        self.n_iter = n_iter
        self.prototypes = {}
        self.examples_seen = 0

    def embed(self, x):
        return F.normalize(self.net(x), p=2, dim=1)

    def stacked_prototypes(self):
        labels = sorted(self.prototypes)
        protos = torch.cat([self.prototypes[c] for c in labels]).detach()
        return protos, torch.tensor(labels, device=protos.device)

    def prototype_loss(self, feats, y):
        protos, labels = self.stacked_prototypes()
        logits = feats @ protos.t() / self.temperature
        target = (y.unsqueeze(1) == labels.unsqueeze(0)).float().argmax(dim=1)
        return F.cross_entropy(logits, target)

    @torch.no_grad()
    def predict(self, x):
        protos, labels = self.stacked_prototypes()
        return labels[(self.embed(x) @ protos.t()).argmax(dim=1)]

    def observe(self, x, y, optimizer):
        self.net.train()
        self.examples_seen += x.size(0)
        stats = {"loss": 0.0}
        for it in range(self.n_iter):
            optimizer.zero_grad()
            feats = F.normalize(self.net(x), p=2, dim=1)
            if len(self.prototypes) > 1:
                loss = self.prototype_loss(feats, y)
                loss.backward()
                optimizer.step()
                stats["loss"] = loss.item()
            if it == self.n_iter - 1:
                with torch.no_grad():
                    for c in torch.unique(y).tolist():
                        batch_p = feats[y == c].mean(dim=0, keepdim=True)
                        if c not in self.prototypes:
                            self.prototypes[c] = torch.zeros(1, self.emb_dim, device=x.device)
                        self.prototypes[c] = F.normalize(self.p_momentum * self.prototypes[c] + (1 - self.p_momentum) * batch_p, p=2, dim=1)
        return stats


def run_stream(learner, stream, test_loader, device="cuda", lr=0.01):
    optimizer = torch.optim.SGD(learner.net.parameters(), lr=lr)
    history = []
    for step, (x, y) in enumerate(stream):
        stats = learner.observe(x.to(device), y.to(device), optimizer)
        history.append(stats["loss"])
        if step % 200 == 0:
            correct = total = 0
            for xt, yt in test_loader:
                pred = learner.predict(xt.to(device))
                correct += (pred.cpu() == yt).sum().item()
                total += yt.numel()
            print(f"step {step} loss {stats['loss']:.4f} acc {correct / max(total, 1):.3f}")
    return history
