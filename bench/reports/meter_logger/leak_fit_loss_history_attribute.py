# Source: https://github.com/rballester/tntorch/pull/19
# Report: a fitting routine kept every step's loss in loss_history; each entry was a full computational graph, and 1000 iterations froze a 12 GB machine.
# Shape: the history is an attribute of the fitting object, appended from a loss that a helper method returns.
# Expect: TML001 line 26
import torch


class LowRankFit:
    def __init__(self, target, rank=8, lr=0.05):
        self.target = target
        self.u = torch.randn(target.shape[0], rank, requires_grad=True)
        self.v = torch.randn(rank, target.shape[1], requires_grad=True)
        self.optimizer = torch.optim.Adam([self.u, self.v], lr=lr)
        self.loss_history = []

    def reconstruction_loss(self, mask):
        approx = self.u @ self.v
        return ((approx - self.target) ** 2 * mask).sum() / mask.sum()

    def fit(self, mask, iterations=1000):
        for _ in range(iterations):
            self.optimizer.zero_grad()
            loss = self.reconstruction_loss(mask)
            loss.backward()
            self.optimizer.step()
            self.loss_history.append(loss)  # expect: TML001
        return self.u @ self.v
