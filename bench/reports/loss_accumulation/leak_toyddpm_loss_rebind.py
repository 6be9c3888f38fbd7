# Source: https://github.com/AlexandreNap/Denoising-Diffusion-Probabilistic-Model-toy-project/blob/4c371f6ed248cbca2350be53e1747286c5906014/src/training.py
# Report: one edit away from the toy DDPM trainer: the line that rebinds loss to loss.detach().item() after backward() is dropped as redundant, so the tensor itself goes into all_losses
# Shape: all_losses (bound before the epoch loop, returned for plotting) gets the attached 0-dim mean loss every step; each entry keeps its graph's nodes and storage for the whole training run
# Expect: TML001 line 83
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class EMA(object):
    def __init__(self, mu=0.999):
        self.mu = mu
        self.shadow = {}

    def register(self, module):
        for name, param in module.named_parameters():
            if param.requires_grad:
                self.shadow[name] = param.data.clone()

    def update(self, module):
        for name, param in module.named_parameters():
            if param.requires_grad:
                self.shadow[name].data = (1. - self.mu) * param.data + self.mu * self.shadow[name].data

    def ema(self, module):
        for name, param in module.named_parameters():
            if param.requires_grad:
                param.data.copy_(self.shadow[name].data)


class NoiseModel(nn.Module):
    def __init__(self, n_steps, hidden=128):
        super().__init__()
        self.t_embed = nn.Embedding(n_steps + 1, hidden)
        self.inp = nn.Linear(2, hidden)
        self.out = nn.Sequential(nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 2))

    def forward(self, x, t):
        return self.out(self.inp(x) + self.t_embed(t.squeeze(1)))


class DiffusionModel:
    def __init__(self, model, n_steps, beta_1, beta_t, device):
        self.model = model.to(device)
        self.n_steps = n_steps
        self.betas = torch.linspace(beta_1, beta_t, n_steps).to(device)
        self.alphas_bar = torch.cumprod(1 - self.betas, dim=0)
        self.r_alphas_bar = torch.sqrt(self.alphas_bar)
        self.r_1m_alphas_bar = torch.sqrt(1 - self.alphas_bar)
        self.device = device

    def diffuse(self, x, t):
        eps = torch.randn(x.shape).to(self.device)
        t = t - 1
        return eps, self.r_alphas_bar[t] * x + self.r_1m_alphas_bar[t] * eps


def train(data, beta_1, beta_t, batch_size, n_epochs, n_steps, lr, device):
    loader = DataLoader(TensorDataset(torch.Tensor(data)), batch_size=batch_size, shuffle=True)
    model = NoiseModel(n_steps)
    diffuser = DiffusionModel(model, n_steps, beta_1, beta_t, device)
    ema = EMA(0.9)
    ema.register(diffuser.model)
    optimizer = torch.optim.Adam(diffuser.model.parameters(), lr=lr, weight_decay=0.001)

    diffuser.model.train()
    all_losses = []
    for epoch in range(n_epochs):
        for batch in loader:
            batch = batch[0].to(device)
            t = torch.randint(1, diffuser.n_steps + 1, (len(batch),)).unsqueeze(1).to(device)
            eps, diffused = diffuser.diffuse(batch, t)
            pred_eps = model(diffused, t)

            loss = (eps - pred_eps) ** 2
            loss = loss.mean()

            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.)
            optimizer.step()
            ema.update(model)
            all_losses.append(loss)  # expect: TML001

    ema.ema(model)
    return diffuser, all_losses
