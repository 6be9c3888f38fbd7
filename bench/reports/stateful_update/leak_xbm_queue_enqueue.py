# Source: https://github.com/dmitriykutsenko/vk_embedder_25/blob/eb5fb428631dcb8734665704f515a21ae5d17d67/src/implementations/cross_batch_memory.py
# Report: the same cross-batch memory with the @torch.no_grad()/detach() dropped from enqueue; the next step then fails with 'backward through the graph a second time' and the usual patch is retain_graph=True
# Shape: memory.enqueue(batch_negs) stores rows of the attached batch_negs in self.embeddings (a deque on a persistent object); with retain_graph=True every queued row keeps its whole step's graph and saved activations alive
# Expect: TML001 line 24; TML006 line 58
from collections import deque

import torch
import torch.nn.functional as F
from torch import amp
from torch.nn.utils import clip_grad_norm_


class CrossBatchMemory:
    def __init__(self, max_size, dim, device):
        self.max_size = max_size
        self.dim = dim
        self.device = device
        self.embeddings = deque()

    def enqueue(self, embs):
        for e in embs:
            if len(self.embeddings) == self.max_size:
                self.embeddings.popleft()
            self.embeddings.append(e)  # expect: TML001

    def get(self):
        if len(self.embeddings) == 0:
            return torch.empty(0, self.dim, device=self.device)
        return torch.stack(tuple(self.embeddings))


def info_nce_loss(anchors, positives, batch_negs, queue_embs, temperature):
    anchors = F.normalize(anchors, dim=-1)
    candidates = F.normalize(torch.cat([positives, batch_negs, queue_embs], dim=0), dim=-1)
    logits = anchors @ candidates.T / temperature
    targets = torch.arange(anchors.size(0), device=anchors.device)
    return F.cross_entropy(logits, targets)


def train_epoch(model, train_dl, optim, scheduler, memory, scaler, cfg):
    model.train()
    total_loss = 0.0
    stride = 2 + cfg["num_hard_negs"]
    for step, batch in enumerate(train_dl):
        optim.zero_grad()
        with amp.autocast("cuda"):
            embs = model(**batch).last_hidden_state[:, 0, :]
        anchors = embs[0::stride]
        positives = embs[1::stride]
        mask = torch.ones(embs.size(0), dtype=torch.bool, device=embs.device)
        mask[0::stride] = False
        mask[1::stride] = False
        batch_negs = embs[mask]

        queue_embs = memory.get()
        loss = info_nce_loss(anchors, positives, batch_negs, queue_embs, cfg["temperature"])

        scaler.scale(loss).backward(retain_graph=True)  # expect: TML006
        scaler.unscale_(optim)
        clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optim)
        scaler.update()
        scheduler.step()

        total_loss += loss.item()
        memory.enqueue(batch_negs)
    return total_loss / len(train_dl)
