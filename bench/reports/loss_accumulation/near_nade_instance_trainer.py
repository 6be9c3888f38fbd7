# Source: https://github.com/manikanta-72/Deep-Generative-Models/blob/27583a9d921985abaef79d605386bea942004f8e/model_utils/train.py
# Report: audit of a NADE (autoregressive generative model) trainer class: train_one_epoch appended every per-batch loss tensor to a list returned at epoch end (never .item()), so each kept loss pinned its autoregressive graph; a later commit switched to loss.item()
# Shape: the fixed trainer (the later commit): the per-batch list only receives loss.item(), so fit() can extend self.history and average plain floats
# Expect: near-miss: must be silent
import torch
from torch import nn


class NADE(nn.Module):
    """Neural autoregressive density estimator over binary pixels."""

    def __init__(self, input_dim, hidden_dim):
        super().__init__()
        self.input_dim = input_dim
        self.W = nn.Parameter(torch.randn(hidden_dim, input_dim) * 0.01)
        self.V = nn.Parameter(torch.randn(input_dim, hidden_dim) * 0.01)
        self.b = nn.Parameter(torch.zeros(input_dim))
        self.c = nn.Parameter(torch.zeros(hidden_dim))

    def forward(self, x):
        # x: (batch, input_dim) in {0, 1}; pixel d only sees pixels < d
        xw = x.unsqueeze(1) * self.W.unsqueeze(0)
        a = self.c.view(1, -1, 1) + torch.cumsum(xw, dim=2) - xw
        h = torch.sigmoid(a)
        logits = torch.einsum("bhd,dh->bd", h, self.V) + self.b
        return torch.sigmoid(logits)


class InstanceTrainer:
    def __init__(self, model, loss_func, optimizer):
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.model = model.to(self.device)
        self.loss_func = loss_func
        self.optimizer = optimizer
        self.history = []

    def train_one_epoch(self, loader):
        # set training mode so dropout/batchnorm behave
        self.model.train()
        train_loss = []
        for batch_idx, (x, _) in enumerate(loader):
            # flatten and binarise the images
            x = x.view(x.size(0), -1).round().to(self.device)
            self.optimizer.zero_grad()
            p = self.model(x)
            loss = self.loss_func(p.clamp(1e-6, 1 - 1e-6), x)
            loss.backward()
            self.optimizer.step()
            if batch_idx % 100 == 0:
                print("batch", batch_idx, "loss:", loss.item())
            train_loss.append(loss.item())
        return train_loss

    def fit(self, loader, epochs):
        for epoch in range(epochs):
            losses = self.train_one_epoch(loader)
            self.history.extend(losses)
            print(f"epoch {epoch}: mean nll {sum(losses) / len(losses)}")
        return self.history


def main(loader, epochs=20):
    model = NADE(input_dim=28 * 28, hidden_dim=500)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    trainer = InstanceTrainer(model, nn.BCELoss(), optimizer)
    return trainer.fit(loader, epochs)
