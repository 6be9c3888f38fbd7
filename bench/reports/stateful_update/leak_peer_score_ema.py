# Source: https://github.com/RaoFoundation/bittensor/pull/557
# Report: miner kept an EMA of per-peer Fisher scores on self.stats; the scores come from autograd on the peer weights, so the EMA chained every step's graph and GPU use climbed
# Shape: self.stats.ema_scores is rebound each step from its own previous value plus graph-attached scores (no detach / no_grad)
# Expect: TML005 line 50
import types

import torch
import torch.nn.functional as F
from torch.nn.utils import clip_grad_norm_


class PeerMiner:
    def __init__(self, nucleus, optimizer, dataset, n_peers, device="cuda"):
        self.nucleus = nucleus
        self.optimizer = optimizer
        self.dataset = dataset
        self.device = device
        self.score_decay = 0.995
        self.stats = types.SimpleNamespace(
            epoch_loss=0.0,
            ema_scores=torch.nn.Parameter(
                torch.full((n_peers,), 1.0 / n_peers, device=device), requires_grad=False
            ),
        )

    def peer_scores(self, loss):
        """Simplified Fisher information: hessian_ii * w_i^2 / 2."""
        w = self.nucleus.peer_weights
        d1 = torch.autograd.grad(loss, w, create_graph=True, retain_graph=True, allow_unused=True)[0]
        if d1 is None:
            return torch.ones_like(w) / w.shape[0]
        d2 = torch.autograd.grad(d1.sum(), w, retain_graph=True, allow_unused=True)[0]
        return d2 * (w ** 2) / 2

    def train_epoch(self, epoch_length):
        self.nucleus.train()
        running = 0.0
        for _ in range(epoch_length):
            inputs = next(self.dataset).to(self.device)
            output = self.nucleus(inputs, training=True)
            output.loss = output.local_target_loss + output.remote_target_loss
            scores = F.normalize(torch.relu(self.peer_scores(output.remote_target_loss)), p=1, dim=0)
            output.loss.backward()
            clip_grad_norm_(self.nucleus.parameters(), 1.0)
            self.optimizer.step()
            self.optimizer.zero_grad()

            running += output.local_target_loss.item()
            decay = self.score_decay
            self.stats.ema_scores = decay * self.stats.ema_scores + (1 - decay) * scores  # expect: TML005

        self.stats.epoch_loss = running / epoch_length
        return self.stats.epoch_loss

    def top_peers(self, k=5):
        vals, uids = torch.topk(self.stats.ema_scores.detach(), k)
        return {int(u): float(v) for u, v in zip(uids, vals)}
