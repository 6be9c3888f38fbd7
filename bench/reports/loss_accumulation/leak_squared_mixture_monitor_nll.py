# Source: https://github.com/PatrickTourniaire/Negative-Gaussian-Mixture-Model/blob/1ec5dc64a529e63f66c20a9b2e9ff47280d21477/sweep_experiment.py
# Report: audit: each batch computes a monitoring NLL with model.neglog_likelihood(data) under autograd, never backpropagates it (the optimised loss is a separate forward), and adds it to train_loss for the epoch, so every batch's full mixture-density graph stays alive until wandb.log
# Shape: a squared Gaussian-mixture module with pdf()/neglog_likelihood()/forward(); the sweep loop sums the un-backwarded monitoring NLL tensor into train_nll and logs the mean in a dict per iteration
# Expect: TML001 line 40
import torch
import torch.nn as nn


class SquaredMixture(nn.Module):
    """Mixture whose (possibly negative) weights are squared to give a valid density."""

    def __init__(self, n_components, n_dims=2):
        super().__init__()
        self.means = nn.Parameter(torch.randn(n_components, n_dims, dtype=torch.float64))
        self.log_scales = nn.Parameter(torch.zeros(n_components, n_dims, dtype=torch.float64))
        self.weights = nn.Parameter(torch.randn(n_components, dtype=torch.float64))

    def pdf(self, x):
        diff = (x[:, None, :] - self.means[None]) / self.log_scales.exp()[None]
        comp = torch.exp(-0.5 * diff.pow(2).sum(-1)) / self.log_scales.exp().prod(-1)
        mix = comp @ self.weights
        return mix.pow(2) / self.weights.pow(2).sum() + 1e-12

    def neglog_likelihood(self, x):
        return -torch.log(self.pdf(x)).mean()

    def forward(self, x, sparsity=0.0):
        return self.neglog_likelihood(x) + sparsity * self.weights.abs().sum()


def run_sweep(model, train_loader, val_loader, cfg, run):
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=cfg["momentum"])
    for it in range(cfg["iterations"]):
        train_nll, n_train = 0, 0
        for batch in train_loader:
            optimizer.zero_grad()
            nll = model.neglog_likelihood(batch)
            objective = model(batch, cfg["sparsity"])
            n_train += 1
            train_nll += nll  # expect: TML001
            objective.backward()
            optimizer.step()

        val_nll, n_val = 0, 0
        with torch.no_grad():
            for batch in val_loader:
                val_nll += model.neglog_likelihood(batch)
                n_val += 1

        run.log({
            "train": {"loss": train_nll / n_train, "it": it},
            "validation": {"loss": val_nll / n_val, "it": it},
        })
    return model
