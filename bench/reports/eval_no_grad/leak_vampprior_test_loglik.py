# Source: https://github.com/jmtomczak/vae_vampprior/blob/bb6ff3e58036adbea448e82d7bc55593d605b52c/models/VAE.py
# Report: audit: the test-time ELBO and importance-sampled log-likelihood loops run the VAE with grad enabled after model.eval() (the old Variable(volatile=True) is a no-op since 0.4), so each 100-sample replica batch builds a full graph
# Shape: evaluate_vae() switches to eval mode, averages detached ELBO terms over the test loader, then estimates log p(x) per test image by replicating it and calling the model; numbers leave via .item()/.numpy() (peak per step)
# Expect: TML003 line 30; TML003 line 47
import math

import numpy as np
import torch
from scipy.special import logsumexp
from torch.autograd import Variable


def elbo_terms(model, x, out, average=True):
    x_mean, z_q, z_mu, z_logvar = out
    re = -torch.nn.functional.binary_cross_entropy(x_mean, x, reduction="none").sum(1)
    log_pz = model.log_prior(z_q)
    log_qz = -0.5 * (z_logvar + (z_q - z_mu).pow(2) / z_logvar.exp()).sum(1)
    kl = -(log_pz - log_qz)
    loss = -re + model.beta * kl
    if average:
        return loss.mean(), re.mean(), kl.mean()
    return loss, re, kl


def evaluate_vae(model, test_loader, device, n_samples=5000, mb=100):
    model.eval()
    totals = {"loss": 0.0, "re": 0.0, "kl": 0.0}
    for data, _ in test_loader:
        x = Variable(data.view(data.size(0), -1).to(device), volatile=True)
        out = model(x)  # expect: TML003
        loss, re, kl = elbo_terms(model, x, out)
        totals["loss"] += loss.item()
        totals["re"] += -re.item()
        totals["kl"] += kl.item()
    totals = {k: v / len(test_loader) for k, v in totals.items()}

    test_x = torch.cat([d.view(d.size(0), -1) for d, _ in test_loader]).to(device)
    repeats = max(1, n_samples // mb)
    per_image = []
    for j in range(test_x.size(0)):
        if j % 100 == 0:
            print(f"{100.0 * j / test_x.size(0):.2f}%")
        x_single = test_x[j].unsqueeze(0)
        chunks = []
        for _ in range(repeats):
            xs = x_single.expand(min(n_samples, mb), x_single.size(1))
            out = model(xs)  # expect: TML003
            nll, _, _ = elbo_terms(model, xs, out, average=False)
            chunks.append(-nll.detach().cpu().numpy())
        a = np.concatenate(chunks)
        per_image.append(logsumexp(a) - math.log(len(a)))
    totals["log_likelihood"] = -float(np.mean(per_image))
    return totals
