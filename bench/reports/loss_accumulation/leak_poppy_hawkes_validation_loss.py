# Source: https://github.com/HongtengXu/PoPPy/commit/170046b3515d79c3c2e97cabdd5666bcbcd4af15
# Report: PoPPy (point-process toolbox) summed validation losses as tensors, `loss += self.loss_function(...)`; PR #2 ("GPU memory leak bug fixed") changed it to `.item()`.
# Shape: validation() runs after lambda_model.eval() with no no_grad and adds each batch's graph-attached loss into `loss`, bound before the loop: every batch's intensity graph stays alive until the epoch's validation ends.
# Expect: TML001 line 93; TML003 line 92
import copy
import time

import numpy as np
import torch
import torch.nn as nn


class MaxLogLike(nn.Module):
    """Negative log-likelihood of a point process: -sum log(lambda_t) + sum Lambda_t."""

    def __init__(self):
        super().__init__()
        self.eps = float(np.finfo(np.float32).eps)

    def forward(self, lambda_t, Lambda_t, c):
        out = lambda_t.gather(1, c)
        return -(torch.log(out + self.eps).sum() - Lambda_t.sum())


class ExpKernelIntensity(nn.Module):
    def __init__(self, num_type, dim=16):
        super().__init__()
        self.mu = nn.Embedding(num_type, 1)
        self.alpha = nn.Embedding(num_type, num_type)
        self.decay = 1.0

    def forward(self, batch):
        hist_types, hist_dt, dt = batch["types"], batch["dts"], batch["dt"]
        mu = self.mu.weight.t().expand(hist_types.size(0), -1)
        excite = (self.alpha(hist_types) * torch.exp(-self.decay * hist_dt).unsqueeze(-1)).sum(1)
        lambda_t = torch.relu(mu + excite) + 1e-4
        Lambda_t = lambda_t * dt.unsqueeze(1)
        return lambda_t, Lambda_t


def to_batch(samples, device):
    ci, types, dts, dt = samples
    return ci.to(device), {"types": types.to(device), "dts": dts.to(device), "dt": dt.to(device)}


class PointProcessModel:
    def __init__(self, num_type, use_cuda=True):
        self.device = torch.device("cuda:0" if use_cuda else "cpu")
        self.lambda_model = ExpKernelIntensity(num_type)
        self.loss_function = MaxLogLike()

    def fit(self, dataloader, optimizer, epochs, sparsity=None, validation_set=None):
        self.lambda_model.to(self.device)
        self.lambda_model.train()
        best_model, best_loss = None, np.inf
        for epoch in range(epochs):
            start = time.time()
            for batch_idx, samples in enumerate(dataloader):
                ci, batch = to_batch(samples, self.device)
                optimizer.zero_grad()
                lambda_t, Lambda_t = self.lambda_model(batch)
                loss = self.loss_function(lambda_t, Lambda_t, ci) / lambda_t.size(0)
                reg = 0
                if sparsity is not None:
                    for parameter in self.lambda_model.parameters():
                        reg += sparsity * torch.sum(torch.abs(parameter))
                loss_total = loss + reg
                loss_total.backward()
                optimizer.step()
                if batch_idx % 100 == 0:
                    print("epoch {} batch {} loss/event {:.6f} ({:.1f}s)".format(
                        epoch, batch_idx, loss.item(), time.time() - start))

            if validation_set is not None:
                val_loss = self.validation(validation_set)
                print("after epoch {}: validation loss per event {:.6f}".format(epoch, val_loss))
                if val_loss < best_loss:
                    best_model = copy.deepcopy(self.lambda_model)
                    best_loss = val_loss
                self.lambda_model.train()

        if best_model is not None:
            self.lambda_model = copy.deepcopy(best_model)

    def validation(self, dataloader):
        self.lambda_model.to(self.device)
        self.lambda_model.eval()
        start = time.time()
        loss = 0
        for batch_idx, samples in enumerate(dataloader):
            ci, batch = to_batch(samples, self.device)
            lambda_t, Lambda_t = self.lambda_model(batch)  # expect: TML003
            loss += self.loss_function(lambda_t, Lambda_t, ci)  # expect: TML001
            if batch_idx % 100 == 0:
                print("validation [{}/{}] {:.2f}s".format(batch_idx, len(dataloader), time.time() - start))
        return loss / len(dataloader.dataset)
