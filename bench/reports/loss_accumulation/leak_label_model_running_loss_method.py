# Source: https://github.com/BatsResearch/labelmodels/issues/4
# Report: the label model's training loop held on to the graph of every batch because running_loss was a sum of non-detached tensors; the GPU ran out of memory on a large training set.
# Shape: the loss comes from a method of the model object (a negative log-likelihood over votes); the epoch loop sums it into running_loss on the object's fit method.
# Expect: TML001 line 30
import torch
import torch.nn as nn


class NaiveBayesLabelModel(nn.Module):
    def __init__(self, num_classes, num_lfs):
        super().__init__()
        self.accuracy = nn.Parameter(torch.full((num_lfs,), 0.7))
        self.class_balance = nn.Parameter(torch.zeros(num_classes))

    def _loss(self, votes):
        log_prior = torch.log_softmax(self.class_balance, dim=0)
        agree = torch.sigmoid(self.accuracy)
        ll = (votes > 0).float() @ torch.log(agree) + (votes == 0).float() @ torch.log(1 - agree)
        return -torch.logsumexp(ll[:, None] + log_prior[None, :], dim=1).mean()

    def estimate_label_model(self, batches, epochs=5, lr=0.01):
        optimizer = torch.optim.SGD(self.parameters(), lr=lr)
        for epoch in range(epochs):
            running_loss = 0.0
            for votes in batches:
                optimizer.zero_grad()
                loss = self._loss(votes)
                loss.backward()
                optimizer.step()
                running_loss += loss  # expect: TML001
            print(f"epoch {epoch}: {running_loss / len(batches)}")
