# Source: https://github.com/kwea123/ngp_pl/blob/05b4c3ed66054449fb0916c67eac802beb861483/models/networks.py
# Report: audited correct idiom in ngp_pl (Instant-NGP in PyTorch Lightning): the occupancy density grid is an EMA (max(grid*decay, new sigmas)) refreshed every 16 training steps from the density network; the upstream method is decorated @torch.no_grad(), as kept here
# Shape: same EMA on the self.density_grid buffer, refreshed from training_step every S steps, but the whole refresh runs under @torch.no_grad(): sigmas and the grid hold no graph
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch import nn
from pytorch_lightning import LightningModule


class NGP(nn.Module):
    def __init__(self, scale=0.5):
        super().__init__()
        self.scale = scale
        self.register_buffer('xyz_min', -torch.ones(1, 3) * scale)
        self.register_buffer('xyz_max', torch.ones(1, 3) * scale)
        self.cascades = max(1 + int(np.ceil(np.log2(2 * scale))), 1)
        self.grid_size = 128
        self.xyz_encoder = nn.Sequential(nn.Linear(3, 64), nn.ReLU(), nn.Linear(64, 16))
        self.rgb_net = nn.Sequential(nn.Linear(19, 64), nn.ReLU(), nn.Linear(64, 3), nn.Sigmoid())

    def density(self, x, return_feat=False):
        x = (x - self.xyz_min) / (self.xyz_max - self.xyz_min)
        h = self.xyz_encoder(x)
        sigmas = torch.exp(h[:, 0])
        if return_feat:
            return sigmas, h
        return sigmas

    def forward(self, x, d):
        sigmas, h = self.density(x, return_feat=True)
        rgbs = self.rgb_net(torch.cat([d, h], 1))
        return sigmas, rgbs

    @torch.no_grad()
    def sample_cells(self, M):
        cells = []
        for c in range(self.cascades):
            coords = torch.randint(self.grid_size, (M, 3), device=self.density_grid.device)
            indices = coords[:, 0] * self.grid_size ** 2 + coords[:, 1] * self.grid_size + coords[:, 2]
            cells.append((indices, coords))
        return cells

    @torch.no_grad()
    def update_density_grid(self, density_threshold, decay=0.95):
        tmp_grid = -torch.ones_like(self.density_grid)
        cells = self.sample_cells(self.grid_size ** 3 // 4)
        for c in range(self.cascades):
            indices, coords = cells[c]
            xyzs = coords / (self.grid_size - 1) * 2 - 1
            s = min(2 ** (c - 1), self.scale)
            half_grid_size = s / self.grid_size
            xyzs_w = xyzs * (s - half_grid_size)
            xyzs_w = xyzs_w + (torch.rand_like(xyzs_w) * 2 - 1) * half_grid_size
            tmp_grid[c, indices] = self.density(xyzs_w)
        # ema update
        valid_mask = (self.density_grid >= 0) & (tmp_grid >= 0)
        self.density_grid[valid_mask] = torch.maximum(self.density_grid[valid_mask] * decay, tmp_grid[valid_mask])
        mean_density = self.density_grid[self.density_grid > 0].mean().item()
        self.density_bitfield = self.density_grid > min(mean_density, density_threshold)


class NeRFSystem(LightningModule):
    def __init__(self, hparams, render_fn, loss_fn):
        super().__init__()
        self.save_hyperparameters(hparams)
        self.model = NGP(scale=hparams.scale)
        G = self.model.grid_size
        self.model.register_buffer('density_grid', torch.zeros(self.model.cascades, G ** 3))
        self.render_fn = render_fn
        self.loss = loss_fn
        self.S = 16  # the interval to update density grid

    def training_step(self, batch, batch_nb):
        if self.global_step % self.S == 0:
            self.model.update_density_grid(self.hparams.density_threshold)
        rays, rgb = batch['rays'], batch['rgb']
        results = self.render_fn(self.model, rays)
        loss_d = self.loss(results, rgb)
        loss = sum(lo.mean() for lo in loss_d.values())
        self.log('train/loss', loss)
        return loss
