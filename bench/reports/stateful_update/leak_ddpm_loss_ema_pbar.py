# Source: https://github.com/cloneofsimo/minDiffusion/blob/00a3c8066d25a34d3d472ef6c87c7b6b238ea444/train_cifar10.py
# Report: audit of the minimal DDPM CIFAR-10 script: the progress-bar loss is smoothed as loss_ema = 0.9 * loss_ema + 0.1 * loss.item(); this variant smooths the loss tensor itself, the slip the repository avoided
# Shape: loss_ema is loop-carried and stays graph-attached, so every step's MSE loss (and its grad_fn) is chained to all earlier ones for the whole epoch
# Expect: TML005 line 57
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision.utils import make_grid, save_image
from tqdm import tqdm


class DDPM(nn.Module):
    def __init__(self, eps_model, betas=(1e-4, 0.02), n_T=1000):
        super().__init__()
        self.eps_model = eps_model
        self.n_T = n_T
        beta_t = torch.linspace(betas[0], betas[1], n_T + 1)
        self.register_buffer("alpha_bar", torch.cumprod(1 - beta_t, dim=0))
        self.register_buffer("beta_t", beta_t)

    def forward(self, x):
        t = torch.randint(1, self.n_T + 1, (x.size(0),), device=x.device)
        eps = torch.randn_like(x)
        ab = self.alpha_bar[t].view(-1, 1, 1, 1)
        x_t = ab.sqrt() * x + (1 - ab).sqrt() * eps
        return F.mse_loss(self.eps_model(x_t, t.float() / self.n_T), eps)

    def sample(self, n, size, device):
        x = torch.randn(n, *size, device=device)
        for i in range(self.n_T, 0, -1):
            z = torch.randn_like(x) if i > 1 else 0
            eps = self.eps_model(x, torch.full((n,), i / self.n_T, device=device))
            a, ab, b = 1 - self.beta_t[i], self.alpha_bar[i], self.beta_t[i]
            x = (x - eps * b / (1 - ab).sqrt()) / a.sqrt() + b.sqrt() * z
        return x


def train_cifar10(eps_model, dataset, n_epoch=100, device="cuda", load_pth=None):
    ddpm = DDPM(eps_model).to(device)
    if load_pth is not None:
        ddpm.load_state_dict(torch.load(load_pth, map_location=device))
    dataloader = DataLoader(dataset, batch_size=512, shuffle=True, num_workers=16)
    optim = torch.optim.Adam(ddpm.parameters(), lr=1e-5)
    for epoch in range(n_epoch):
        ddpm.train()
        pbar = tqdm(dataloader)
        loss_ema = None
        for x, _ in pbar:
            optim.zero_grad()
            x = x.to(device)
            loss = ddpm(x)
            loss.backward()
            if loss_ema is None:
                loss_ema = loss
            else:
                loss_ema = 0.9 * loss_ema + 0.1 * loss  # expect: TML005
            pbar.set_description(f"epoch {epoch} loss: {loss_ema:.4f}")
            optim.step()

        ddpm.eval()
        with torch.no_grad():
            xh = ddpm.sample(8, (3, 32, 32), device)
            grid = make_grid(torch.cat([xh, x[:8]], dim=0), normalize=True, value_range=(-1, 1), nrow=4)
            save_image(grid, f"./contents/ddpm_sample_cifar{epoch}.png")
            torch.save(ddpm.state_dict(), "./ddpm_cifar.pth")
