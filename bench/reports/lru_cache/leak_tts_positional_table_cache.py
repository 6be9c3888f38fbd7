# Source: https://github.com/msalhab96/MultiSpeech/blob/e7d19f9a607f67fd58ba27c8f9bf75ae5e535c00/utils.py
# Report: audit of a multi-speaker TTS model: get_positionals(max_length, d_model) is wrapped in functools.lru_cache and returns a freshly built sinusoid tensor; encoder and decoder call it with each batch's sequence length, so the cache holds tensors keyed by every length seen
# Shape: the cached helper takes the device too and builds the table there; variable-length utterances give a new key almost every step, so one GPU table per distinct (length, d_model, device) stays alive for the life of the process
# Expect: TML012 line 12
import math
from functools import lru_cache

import torch
from torch import Tensor, nn


@lru_cache(maxsize=None)  # expect: TML012
def get_positionals(max_length: int, d_model: int, device: str) -> Tensor:
    """Sinusoid table of shape [max_length, d_model], built on `device`."""
    result = torch.zeros(max_length, d_model, dtype=torch.float, device=device)
    for pos in range(max_length):
        for i in range(0, d_model, 2):
            denominator = pow(10000, 2 * i / d_model)
            result[pos, i] = math.sin(pos / denominator)
            result[pos, i + 1] = math.cos(pos / denominator)
    return result


class PositionalEmbedding(nn.Module):
    def __init__(self, vocab_size: int, d_model: int, pad_idx: int, device: str):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_idx)
        self.lnorm = nn.LayerNorm(d_model)
        self.d_model = d_model
        self.device = device

    def forward(self, x: Tensor) -> Tensor:
        out = self.lnorm(self.embedding(x))
        pos = get_positionals(x.shape[1], self.d_model, self.device)
        return out + pos


class DecoderPrenet(nn.Module):
    def __init__(self, n_mels: int, d_model: int, device: str):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_mels, d_model), nn.ReLU(),
                                 nn.Dropout(0.5), nn.Linear(d_model, d_model))
        self.d_model = d_model
        self.device = device

    def forward(self, mels: Tensor) -> Tensor:
        out = self.net(mels)
        return out + get_positionals(mels.shape[1], self.d_model, self.device)


def train_epoch(text_emb, prenet, head, loader, optimizer, device):
    criterion = nn.L1Loss()
    total = 0.0
    for text, mels in loader:  # utterances padded per batch: lengths vary
        text, mels = text.to(device), mels.to(device)
        enc = text_emb(text)
        dec = prenet(mels)
        ctx = enc.mean(dim=1, keepdim=True)
        pred = head(dec + ctx)
        loss = criterion(pred, mels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(loader)
