# Source: https://github.com/akandykeller/NeuralWaveMachines/blob/master/Rotating_MNIST/tvae/utils/train_loops.py
# Report: Neural Wave Machines train_epoch_autoregressive(): a recurrent VAE is unrolled over each rotating-MNIST sequence, the per-step KL / NLL are summed for one backward, and the epoch totals are kept with .detach()
# Shape: seq_kl / seq_neg_log_px_z and h_tm1 are re-initialised for every batch (intended BPTT over one sequence, then backward); the epoch-level totals outlive the batch loop but only receive loss.detach()
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm


class WaveRNNVAE(nn.Module):
    def __init__(self, x_dim=784, h_dim=1296, z_dim=1296, dt=0.1):
        super().__init__()
        self.h_dim, self.dt = h_dim, dt
        self.enc = nn.Linear(x_dim, 2 * z_dim)
        self.coupling = nn.Linear(h_dim, h_dim, bias=False)
        self.dec = nn.Linear(h_dim, x_dim)

    def init_hidden(self, x_seq):
        return torch.zeros(x_seq.shape[0], 2, self.h_dim, device=x_seq.device)

    def forward(self, x_t, h_tm1, x_tp1):
        mu, logvar = self.enc(x_t.flatten(1)).chunk(2, dim=-1)
        z_t = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        pos, vel = h_tm1[:, 0], h_tm1[:, 1]
        u_t = torch.tanh(self.coupling(pos) + z_t)
        vel = vel + self.dt * (u_t - pos)
        pos = pos + self.dt * vel
        h_t = torch.stack([pos, vel], dim=1)
        probs_x = torch.sigmoid(self.dec(pos))
        kl_z = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(-1)
        neg_log_px_z = F.binary_cross_entropy(probs_x, x_tp1.flatten(1), reduction="none").sum(-1)
        return z_t, u_t, h_t, probs_x, kl_z, neg_log_px_z


def train_epoch_autoregressive(model, optimizer, train_loader, log, epoch, eval_batches=300, grad_clip_norm=None):
    total_loss = 0
    total_kl = 0
    total_neg_logpx_z = 0
    num_batches = 0

    model.train()
    for x, label in tqdm(train_loader):
        optimizer.zero_grad()
        x = x.float().to("cuda")
        seq_len = max(x.shape[1:4])
        assert np.prod(x.shape[1:4]) == seq_len
        x_seq = x.view(x.shape[0], seq_len, *x.shape[-3:])
        h_tm1 = model.init_hidden(x_seq=x_seq)

        seq_kl = 0.0
        seq_neg_log_px_z = 0.0
        seq_probs_x = []
        hs = []
        for i in range(seq_len):
            i_p1 = (i + 1) % seq_len
            z_t, u_t, h_t, probs_x, kl_z, neg_log_px_z = model(x_seq[:, i], h_tm1, x_seq[:, i_p1])
            seq_kl += kl_z.sum()
            seq_neg_log_px_z += neg_log_px_z.sum()
            seq_probs_x.append(probs_x)
            hs.append(h_t.detach().cpu())
            h_tm1 = h_t

        avg_KLD = seq_kl / (x_seq.shape[0] * seq_len)
        avg_neg_logpx_z = seq_neg_log_px_z / (x_seq.shape[0] * seq_len)
        loss = avg_neg_logpx_z + avg_KLD
        loss.backward()
        if grad_clip_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip_norm)
        optimizer.step()

        total_loss += loss.detach()
        total_neg_logpx_z += avg_neg_logpx_z.detach()
        total_kl += avg_KLD.detach()
        num_batches += 1
        b_idx = epoch * len(train_loader) + num_batches
        if b_idx % eval_batches == 0:
            log("Train Total Loss", loss.detach())
            log("Train KLD", avg_KLD.detach())

    return total_loss, total_neg_logpx_z, total_kl, num_batches


if __name__ == "__main__":
    model = WaveRNNVAE().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=2.5e-4, momentum=0.9)
    loader = [(torch.rand(128, 18, 1, 1, 1, 28, 28), None) for _ in range(100)]
    for e in range(50):
        total_loss, total_nll, total_kl, n = train_epoch_autoregressive(model, opt, loader, print, e)
        print("Epoch Avg Loss", total_loss / n)
