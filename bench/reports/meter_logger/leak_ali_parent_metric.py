# Source: https://github.com/edgarriba/ali-pytorch/blob/f9d4ef7ed0d316e764943a8bc2fd8bb2b5124b7a/main.py
# Report: ALI (adversarially learned inference) GAN trainer logs both losses through an experiment logger's ParentWrapper/AvgMetric; passing the CUDA loss Variables raised CUDA out of memory (author's TODO in main.py, reported in oval-group/mlogger#3)
# Shape: train_metrics (created once at module level, reset per epoch) forwards each value to AvgMetric.update, whose self._total += value * n sums the graph-attached D_loss / G_loss of every batch, chaining the graphs for the whole epoch
# Expect: TML001 line 114
from itertools import chain

import torch
import torch.nn as nn
import torch.optim as optim
import torchvision.utils as vutils

import models as ali


class AvgMetric:
    def __init__(self, name):
        self.name = name
        self.reset()

    def reset(self):
        self._total = 0.0
        self._count = 0

    def update(self, value, n=1):
        self._total += value * n
        self._count += n

    @property
    def value(self):
        return self._total / max(self._count, 1)


class ParentWrapper:
    def __init__(self, tag, name, children):
        self.tag, self.name = tag, name
        self.children = {child.name: child for child in children}

    def update(self, n=1, **values):
        for key, value in values.items():
            self.children[key].update(value, n)

    def reset(self):
        for child in self.children.values():
            child.reset()


class Experiment:
    def __init__(self, name):
        self.name = name
        self.logged = []

    def log_metric(self, parent):
        self.logged.append({k: float(c.value) for k, c in parent.children.items()})


nz, eps, cuda = 256, 1e-15, torch.cuda.is_available()
xp = Experiment("xp_name")
train_metrics = ParentWrapper(tag="train", name="parent", children=(AvgMetric("lossD"), AvgMetric("lossG")))

netGx, netGz, netDx, netDz, netDxz = ali.create_models("cifar10", nz, 1)
if cuda:
    netGx.cuda(), netGz.cuda(), netDx.cuda(), netDz.cuda(), netDxz.cuda()
optimizerD = optim.Adam(chain(netDx.parameters(), netDz.parameters(), netDxz.parameters()), lr=1e-4, betas=(0.5, 0.999))
optimizerG = optim.Adam(chain(netGx.parameters(), netGz.parameters()), lr=1e-4, betas=(0.5, 0.999))


def softplus(v):
    return torch.log(1.0 + torch.exp(v))


def compute_loss(x, z, noise, d_loss=False):
    z_hat = netGz(x)
    mu, sigma = z_hat[:, :nz], z_hat[:, nz:].exp()
    z_hat = mu + sigma * noise.expand_as(sigma)
    x_hat = netGx(z)
    data_preds = netDxz(torch.cat([netDx(x), netDz(z_hat)], 1)) + eps
    sample_preds = netDxz(torch.cat([netDx(x_hat), netDz(z)], 1)) + eps
    if d_loss:
        return torch.mean(softplus(-data_preds) + softplus(sample_preds))
    return torch.mean(softplus(data_preds) + softplus(-sample_preds))


def set_requires_grad(nets, flag):
    for net in nets:
        for p in net.parameters():
            p.requires_grad = flag


def train(dataloader, epoch):
    for net in (netDx, netDz, netDxz, netGx, netGz):
        net.train()
    for batch_id, (real_cpu, _) in enumerate(dataloader):
        batch_size = real_cpu.size(0)
        x = real_cpu.cuda() if cuda else real_cpu
        z = torch.randn(batch_size, nz, 1, 1, device=x.device)
        noise = torch.randn(batch_size, 1, 1, 1, device=x.device)

        D_loss = compute_loss(x, z, noise, d_loss=True)
        G_loss = compute_loss(x, z, noise, d_loss=False)

        set_requires_grad((netGx, netGz), False)
        set_requires_grad((netDx, netDz, netDxz), True)
        optimizerD.zero_grad()
        D_loss.backward()
        optimizerD.step()

        set_requires_grad((netGx, netGz), True)
        set_requires_grad((netDx, netDz, netDxz), False)
        optimizerG.zero_grad()
        G_loss.backward()
        optimizerG.step()

        print(f"[{epoch}][{batch_id}/{len(dataloader)}] Loss_D: {D_loss.item()} Loss_G: {G_loss.item()}")
        train_metrics.update(lossD=D_loss, lossG=G_loss, n=len(real_cpu))  # expect: TML001
    xp.log_metric(train_metrics)


def test(dataloader, epoch):
    real_first, _ = next(iter(dataloader))
    real_first = real_first.mul(0.5).add(0.5)
    if cuda:
        real_first = real_first.cuda()
    netGx.eval(), netGz.eval()
    with torch.no_grad():
        latent = netGz(real_first)
        mu, sigma = latent[:, :nz], latent[:, nz:].exp()
        recon = netGx(mu + sigma)
    vutils.save_image(recon, f"samples/reconstruction_{epoch}.png")


def main(dataloader, epochs=10):
    for epoch in range(epochs):
        train_metrics.reset()
        train(dataloader, epoch)
        test(dataloader, epoch)
        torch.save(netGx.state_dict(), f"samples/netGx_epoch_{epoch}.pth")
