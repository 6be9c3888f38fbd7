# Source: https://github.com/caetas/GenerativeZoo/blob/2c32ebd768b2dc8f466eef5a4b120e4f00d7fcc3/src/generativezoo/models/Flow/RealNVP.py
# Report: the RealNVP sampler and OOD scorer with the no_grad the earlier version of the file had on sample(), applied to both evaluation methods
# Shape: sample() and outlier_detection() are decorated with @torch.no_grad(), so the eval-mode forwards build no graph; train_model() keeps only nll.item()
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Coupling(nn.Module):
    def __init__(self, channels, mid):
        super().__init__()
        self.st_net = nn.Sequential(nn.Conv2d(channels, mid, 3, padding=1), nn.ReLU(),
                                    nn.Conv2d(mid, 2 * channels, 3, padding=1))

    def forward(self, x, sldj, reverse):
        s, t = self.st_net(x.flip(1)).chunk(2, dim=1)
        s = torch.tanh(s)
        if reverse:
            return x * s.mul(-1).exp() - t, sldj
        return (x + t) * s.exp(), sldj + s.reshape(s.size(0), -1).sum(-1)


class RealNVP(nn.Module):
    def __init__(self, img_size, in_channels, mid_channels=64, n_layers=8):
        super().__init__()
        self.register_buffer("data_constraint", torch.tensor([0.9]))
        self.flows = nn.ModuleList([Coupling(in_channels, mid_channels) for _ in range(n_layers)])
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.to(self.device)
        self.img_size, self.channels = img_size, in_channels

    def forward(self, x, reverse=False):
        sldj = None
        if not reverse:
            y = (x * 255. + torch.rand_like(x)) / 256.
            y = ((2 * y - 1) * self.data_constraint + 1) / 2
            x = y.log() - (1. - y).log()
            sldj = (F.softplus(x) + F.softplus(-x)).view(x.size(0), -1).sum(-1)
        layers = reversed(self.flows) if reverse else self.flows
        for flow in layers:
            x, sldj = flow(x, sldj, reverse)
        return x, sldj

    def nll_score(self, z, sldj):
        prior_ll = -0.5 * (z ** 2 + np.log(2 * np.pi))
        prior_ll = prior_ll.view(z.size(0), -1).sum(-1) - np.log(256) * np.prod(z.size()[1:])
        return -(prior_ll + sldj)

    def train_model(self, dataloader, n_epochs, lr, sample_every):
        optimizer = torch.optim.Adam(self.parameters(), lr=lr)
        for epoch in range(n_epochs):
            self.train()
            loss_epoch = 0.
            for x, _ in dataloader:
                x = x.to(self.device)
                optimizer.zero_grad()
                z, sldj = self.forward(x, reverse=False)
                nll = self.nll_score(z, sldj).mean()
                nll.backward()
                optimizer.step()
                loss_epoch += nll.item() * x.size(0)
            print(epoch, loss_epoch / len(dataloader.dataset))
            if (epoch + 1) % sample_every == 0 or epoch == 0:
                self.sample(16)

    @torch.no_grad()
    def sample(self, n_samples):
        self.eval()
        z = torch.randn((n_samples, self.channels, self.img_size, self.img_size), device=self.device)
        x, _ = self.forward(z, reverse=True)
        return torch.sigmoid(x).clamp(0, 1).cpu().detach()

    @torch.no_grad()
    def outlier_detection(self, in_loader, out_loader):
        self.eval()
        in_scores, out_scores = [], []
        for x, _ in in_loader:
            x = x.to(self.device)
            z, sldj = self.forward(x, reverse=False)
            nll = self.nll_score(z, sldj)
            in_scores.append(nll.cpu().detach().numpy())
        for x, _ in out_loader:
            x = x.to(self.device)
            z, sldj = self.forward(x, reverse=False)
            nll = self.nll_score(z, sldj)
            out_scores.append(nll.cpu().detach().numpy())
        return np.concatenate(in_scores), np.concatenate(out_scores)
