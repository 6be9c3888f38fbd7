# Source: https://github.com/dmitriykutsenko/vk_embedder_25/blob/eb5fb428631dcb8734665704f515a21ae5d17d67/src/implementations/cross_batch_memory.py
# Report: a cross-batch memory (queue of past negative embeddings) is filled after every step with the still-attached batch_negs; enqueue runs under @torch.no_grad() and stores embs.detach()
# Shape: memory.enqueue(batch_negs) hands a graph-attached tensor to a persistent object, but the method body detaches each row before the deque append, so no graph outlives the step
# Expect: near-miss: must be silent
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

    @torch.no_grad()
    def enqueue(self, embs):
        for e in embs.detach():
            if len(self.embeddings) == self.max_size:
                self.embeddings.popleft()
            self.embeddings.append(e)

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

        scaler.scale(loss).backward()
        scaler.unscale_(optim)
        clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optim)
        scaler.update()
        scheduler.step()

        total_loss += loss.item()
        memory.enqueue(batch_negs)
    return total_loss / len(train_dl)
