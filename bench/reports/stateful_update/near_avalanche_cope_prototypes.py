# Source: https://github.com/ContinualAI/avalanche/blob/eb075be393e1f458b2c352514ff6c17b5a2c0f4e/avalanche/training/plugins/cope.py
# Report: Continual Prototype Evolution plugin (continual / online learning): after every forward it sums the batch's embeddings per class into self.tmp_p_mem, and after each experience it folds them into the class prototypes with an exponential moving average (p = alpha * old_p + (1 - alpha) * incr_p); the library guards both updates with @torch.no_grad() and .detach()
# Shape: the library's own code, kept: both state updates run under @torch.no_grad() and the new prototype is stored .detach()ed, so neither the running sums nor the EMA prototypes ever join a training step's graph; the strategy's training loop is inlined as train_experience
# Expect: near-miss: must be silent
from typing import Dict

import torch
from torch import Tensor
from torch.nn.functional import normalize


class CoPEPlugin:
    def __init__(self, n_classes=10, p_size=100, alpha=0.99, T=0.1):
        self.n_classes = n_classes
        self.p_size = p_size
        self.alpha = alpha
        self.p_mem: Dict[int, Tensor] = {}
        self.tmp_p_mem = {}
        self.ppp_loss = PPPloss(self.p_mem, T=T)

    @torch.no_grad()
    def init_prototypes(self, device):
        for c in range(self.n_classes):
            self.p_mem[c] = normalize(torch.empty((1, self.p_size)).uniform_(-1, 1), p=2, dim=1).to(device)

    def after_forward(self, mb_output, mb_y):
        self._update_running_prototypes(mb_output, mb_y)

    @torch.no_grad()
    def _update_running_prototypes(self, mb_output, mb_y):
        """Accumulate seen outputs of the network and keep counts."""
        y_unique = torch.unique(mb_y).squeeze().view(-1)
        for idx in range(y_unique.size(0)):
            c = y_unique[idx].item()
            idxs = torch.nonzero(mb_y == c).squeeze(1)
            p_tmp_batch = mb_output[idxs].sum(dim=0).unsqueeze(0)
            p_init, cnt_init = self.tmp_p_mem[c] if c in self.tmp_p_mem else (0, 0)
            self.tmp_p_mem[c] = (p_init + p_tmp_batch, cnt_init + len(idxs))

    def after_training_exp(self):
        self._update_prototypes()

    @torch.no_grad()
    def _update_prototypes(self):
        """Update the prototypes based on the running averages."""
        for c, (p_sum, p_cnt) in self.tmp_p_mem.items():
            incr_p = normalize(p_sum / p_cnt, p=2, dim=1)
            old_p = self.p_mem[c].clone()
            new_p_momentum = self.alpha * old_p + (1 - self.alpha) * incr_p
            self.p_mem[c] = normalize(new_p_momentum, p=2, dim=1).detach()
        self.tmp_p_mem = {}


class PPPloss:
    def __init__(self, p_mem, T=0.1):
        self.p_mem = p_mem
        self.T = T

    def __call__(self, x, y):
        x = x.view(x.size(0), -1)
        p_x = torch.cat([self.p_mem[c] for c in sorted(self.p_mem)]).to(x.device).detach()
        logits = torch.mm(x, p_x.t()).div(self.T)
        return torch.nn.functional.cross_entropy(logits, y)


def train_experience(model, optimizer, plugin, dataloader, device):
    model.train()
    for mb_x, mb_y in dataloader:
        mb_x, mb_y = mb_x.to(device), mb_y.to(device)
        optimizer.zero_grad()
        mb_output = model(mb_x)  # L2-normalized embedding
        plugin.after_forward(mb_output, mb_y)
        loss = plugin.ppp_loss(mb_output, mb_y)
        loss.backward()
        optimizer.step()
    plugin.after_training_exp()


def run(model, optimizer, train_stream, make_loader, device="cuda"):
    plugin = CoPEPlugin(n_classes=10, p_size=model.feature_size)
    plugin.init_prototypes(device)
    for experience in train_stream:
        train_experience(model, optimizer, plugin, make_loader(experience), device)
    return plugin.p_mem
