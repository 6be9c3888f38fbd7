# Source: https://github.com/AntoniaLovjer/adversarial_robustness_audio/blob/e39524ad7f9f61a41a7df613c1c2564c4d54f631/attacks.py
# Report: audit of a speech-command adversarial-training repo: pgd_linf updates its perturbation through delta.data and returns delta.detach(), which keeps one leaf and no history; this is the variant it avoids, where delta is rebound from its own attached value each PGD step
# Shape: the repository's correct shape: the same update expression on the right, but written into delta.data (the leaf is reused, no history) and the helper returns delta.detach()
# Expect: near-miss: must be silent
import time

import numpy as np
import torch
import torch.nn as nn


def pgd_linf(model, X, y, epsilon=0.1, alpha=0.01, num_iter=20, randomize=False):
    """Construct PGD adversarial perturbations for the spectrogram batch X."""
    if randomize:
        delta = torch.rand_like(X, requires_grad=True)
        delta.data = delta.data * 2 * epsilon - epsilon
    else:
        delta = torch.zeros_like(X, requires_grad=True)
    for t in range(num_iter):
        loss = nn.CrossEntropyLoss()(model(X + delta), y)
        grad, = torch.autograd.grad(loss, delta)
        delta.data = (delta + alpha * grad.sign()).clamp(-epsilon, epsilon)
    return delta.detach()


class BaseTrainer:
    def __init__(self, model, train_dl, criterion, log_fn=print):
        self.model = model
        self.train_dl = train_dl
        self.criterion = criterion
        self.log = log_fn

    def run_epoch(self, epoch, optimizer, attack=pgd_linf, epsilon=0.3, alpha=0.1, num_iter=7):
        self.model.train()
        running_loss, running_corrects, n = 0.0, 0.0, 0
        for batch_idx, (X, y_true) in enumerate(self.train_dl):
            start = time.time()
            X, y_true = X.cuda(), y_true.cuda()
            optimizer.zero_grad()
            delta = attack(self.model, X, y_true, epsilon, alpha, num_iter)
            y_pred = self.model(X + delta)
            loss = self.criterion(y_pred, y_true)
            loss.backward()
            optimizer.step()

            indices = torch.argmax(y_pred, dim=1)
            running_loss += float(loss)
            running_corrects += np.sum(indices.detach().cpu().numpy() == y_true.cpu().numpy())
            n += y_true.shape[0]
            if (batch_idx + 1) % 20 == 0:
                self.log(f"[epoch {epoch + 1}, batch {batch_idx + 1:5d}] loss {running_loss / n:.5f} "
                         f"acc {running_corrects / n:.5f} ({time.time() - start:.3f}s/batch)")
        return running_loss / n, running_corrects / n

    def fit(self, optimizer, n_epochs, **attack_kwargs):
        history = []
        for epoch in range(n_epochs):
            history.append(self.run_epoch(epoch, optimizer, **attack_kwargs))
        return history
