# Source: https://github.com/BatsResearch/labelmodels/issues/4
# Report: the fix detaches the loss before adding it to the running total.
# Shape: the same fit method; running_loss adds loss.item().
# Expect: near-miss: must be silent
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class LabelModel(nn.Module):
    def __init__(self, sources=8, classes=4):
        super().__init__()
        self.accuracy = nn.Parameter(torch.randn(sources, classes))
        self.prior = nn.Parameter(torch.zeros(classes))

    def neg_log_likelihood(self, votes):
        scores = votes @ self.accuracy + self.prior
        return -torch.logsumexp(scores, dim=1).mean()

    def fit(self, batches, lr=0.01):
        optimizer = torch.optim.SGD(self.parameters(), lr=lr)
        running_loss = 0.0
        for votes in batches:
            optimizer.zero_grad()
            loss = self.neg_log_likelihood(votes)
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
        return running_loss


model = LabelModel().to(device)
print(float(model.fit([torch.rand(32, 8, device=device) for _ in range(24)])))
