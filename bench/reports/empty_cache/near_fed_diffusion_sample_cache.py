# Source: https://github.com/soizhiwen/FedAvg-TimeGAN/blob/22a3a3d5362467c48aa72c2231535f09ea558c42/engine/solver.py
# Report: audit of the per-client diffusion Trainer used for federated evaluation: Trainer.sample() generates synthetic series in num // size_every cycles and calls torch.cuda.empty_cache() at the end of every cycle, right after copying the batch to NumPy
# Shape: the same sampling method, with empty_cache moved after the chunk loop: called once per sample() call, not once per generated chunk, while the no_grad reverse-diffusion loop still carries x from step to step
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn


def calc_diffusion_hyperparams(T, beta_0, beta_T, device):
    beta = torch.linspace(beta_0, beta_T, T)
    alpha = 1 - beta
    alpha_bar = torch.cumprod(alpha, dim=0)
    beta_tilde = beta.clone()
    beta_tilde[1:] = beta[1:] * (1 - alpha_bar[:-1]) / (1 - alpha_bar[1:])
    return {"T": T, "Alpha": alpha.to(device), "Alpha_bar": alpha_bar.to(device),
            "Sigma": beta_tilde.sqrt().to(device)}


def sampling(net, size, dh, device):
    T, alpha, alpha_bar, sigma = dh["T"], dh["Alpha"], dh["Alpha_bar"], dh["Sigma"]
    x = torch.randn(size, device=device)
    with torch.no_grad():
        for t in range(T - 1, -1, -1):
            steps = torch.full((size[0], 1), t, device=device)
            eps = net(x, steps)
            x = (x - (1 - alpha[t]) / torch.sqrt(1 - alpha_bar[t]) * eps) / torch.sqrt(alpha[t])
            if t > 0:
                x = x + sigma[t] * torch.randn(size, device=device)
    return x


class Trainer:
    def __init__(self, model, dataloader, config, device="cuda"):
        self.model = model.to(device)
        self.dl = dataloader
        self.device = device
        self.train_num_steps = config["n_iters"]
        self.opt = torch.optim.Adam(self.model.parameters(), lr=config["learning_rate"])
        self.dh = calc_diffusion_hyperparams(device=device, **config["diffusion"])
        self.loss_fn = nn.MSELoss()

    def load(self, path):
        data = torch.load(path, map_location=self.device)
        self.model.load_state_dict(data["model"])
        self.opt.load_state_dict(data["opt"])

    def train(self):
        total_losses = 0.0
        for _ in range(self.train_num_steps):
            total_loss = 0.0
            for batch in self.dl:
                x0 = batch.to(self.device).permute(0, 2, 1)
                t = torch.randint(self.dh["T"], (x0.size(0), 1, 1), device=self.device)
                noise = torch.randn_like(x0)
                a_bar = self.dh["Alpha_bar"][t]
                xt = a_bar.sqrt() * x0 + (1 - a_bar).sqrt() * noise
                self.opt.zero_grad()
                loss = self.loss_fn(self.model(xt, t.view(-1, 1)), noise)
                loss.backward()
                self.opt.step()
                total_loss += loss.item()
            total_losses += total_loss
        return total_losses / self.train_num_steps

    def sample(self, num, size_every, shape):
        self.model.eval()
        chunks = []
        num_cycle = int(num // size_every) + 1
        for _ in range(num_cycle):
            sample_size = (size_every, shape[1], shape[0])
            sample = sampling(self.model, sample_size, self.dh, self.device).permute(0, 2, 1)
            chunks.append(sample.cpu().numpy())
        # hand the cached sampling blocks back once, before the metrics run on CPU
        torch.cuda.empty_cache()
        self.model.train()
        return np.concatenate(chunks, axis=0)[:num]
