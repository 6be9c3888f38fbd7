# Source: https://github.com/wassname/world-models-sonic-pytorch/blob/01f860c2ccf232fc2f604e1cd66fc028c855c643/world_models_sonic/models/world_model.py
# Report: audit of a world-model (VAE + MDN-RNN + inverse model) trainer that hands live per-step losses (loss_vae.mean(), loss_mdn.mean(), ...) to logger.scalar_summary every update; as in the repo, the logger turns the tensor into a plain number before keeping anything, so the graph is not retained
# Shape: same dict of graph-attached losses passed to logger.scalar_summary each step; scalar_summary detaches and converts with .item() before appending to self.history[tag] and writing to TensorBoard
# Expect: near-miss: must be silent
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.tensorboard import SummaryWriter


class ScalarLogger:
    def __init__(self, log_dir):
        self.writer = SummaryWriter(log_dir)
        self.history = defaultdict(list)
        self.step = 0

    def scalar_summary(self, tag, value):
        if torch.is_tensor(value):
            value = value.detach().mean().item()
        self.history[tag].append(value)
        self.writer.add_scalar(tag, value, self.step)

    def tick(self):
        self.step += 1


class WorldModel(nn.Module):
    def __init__(self, vae, mdnrnn, finv, lambda_kld=0.25, lambda_finv=0.01):
        super().__init__()
        self.vae, self.mdnrnn, self.finv = vae, mdnrnn, finv
        self.lambda_kld = lambda_kld
        self.lambda_finv = lambda_finv

    def forward_train(self, obs, actions, next_obs, hidden=None):
        recon, mu, logvar = self.vae(obs)
        loss_recon = F.mse_loss(recon, obs, reduction="none").flatten(1).mean(1)
        loss_kld = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        with torch.no_grad():
            _, mu_next, _ = self.vae(next_obs)
        pi, means, sigmas, hidden = self.mdnrnn(z.unsqueeze(1), actions.unsqueeze(1).float(), hidden)
        loss_mdn = self.mdnrnn.nll(mu_next.unsqueeze(1), pi, means, sigmas).sum(1)
        z_next = self.mdnrnn.sample(pi, means, sigmas).squeeze(1)
        action_logits = self.finv(z, z_next)
        loss_inv = F.cross_entropy(action_logits, actions, reduction="none")
        loss_vae = loss_recon + self.lambda_kld * loss_kld
        loss = loss_vae + loss_mdn + self.lambda_finv * loss_inv
        return {
            "loss": loss,
            "loss_vae": loss_vae,
            "loss_kld": loss_kld,
            "loss_mdn": loss_mdn,
            "loss_inv": loss_inv,
        }, hidden


def train_world_model(world_model, loader, epochs=5, lr=3e-4, device="cuda", log_dir="runs/wm"):
    world_model.to(device).train()
    optimizer = torch.optim.Adam(world_model.parameters(), lr=lr)
    logger = ScalarLogger(log_dir)
    for epoch in range(epochs):
        for obs, actions, next_obs in loader:
            obs, actions, next_obs = obs.to(device), actions.to(device), next_obs.to(device)
            losses, _ = world_model.forward_train(obs, actions, next_obs)
            optimizer.zero_grad()
            losses["loss"].mean().backward()
            optimizer.step()
            for tag, value in losses.items():
                logger.scalar_summary(tag, value.mean())
            logger.tick()
        recent = logger.history["loss"][-100:]
        print(f"epoch {epoch}: world-model loss {sum(float(v) for v in recent) / len(recent):.4f}")
    return logger.history
