# Source: https://github.com/BatsResearch/labelmodels/issues/4
# Report: the label model's training loop held every batch's graph because running_loss summed non-detached loss tensors; the GPU ran out of memory on a large training set.
# Shape: the loss is a method of the model object; its fit method sums it into running_loss after the backward.
# Expect: TML001 line 30
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
            running_loss += loss  # expect: TML001
        return running_loss


model = LabelModel().to(device)
print(float(model.fit([torch.rand(32, 8, device=device) for _ in range(24)])))
