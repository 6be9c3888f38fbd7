# Source: https://github.com/msalhab96/MultiSpeech/blob/e7d19f9a607f67fd58ba27c8f9bf75ae5e535c00/utils.py
# Report: audit of a multi-speaker TTS model: get_positionals(max_length, d_model) is wrapped in functools.lru_cache and returns a freshly built sinusoid tensor; encoder and decoder call it with each batch's sequence length, so the cache holds tensors keyed by every length seen
# Shape: fixed variant: lru_cache stays, but only on a helper that maps d_model to a tuple of Python floats; the tensor table is a registered buffer built once and sliced per batch
# Expect: near-miss: must be silent
import math
from functools import lru_cache
from typing import Tuple

import torch
from torch import Tensor, nn


@lru_cache(maxsize=None)
def inverse_denominators(d_model: int) -> Tuple[float, ...]:
    """1 / 10000^(2i/d) for every even channel, as plain floats."""
    return tuple(1.0 / pow(10000, 2 * i / d_model) for i in range(0, d_model, 2))


def build_positionals(max_length: int, d_model: int) -> Tensor:
    freqs = torch.tensor(inverse_denominators(d_model))
    angles = torch.arange(max_length, dtype=torch.float).unsqueeze(1) * freqs
    table = torch.zeros(max_length, d_model)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)
    return table


class PositionalEmbedding(nn.Module):
    def __init__(self, vocab_size: int, d_model: int, pad_idx: int, max_len: int = 2048):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_idx)
        self.lnorm = nn.LayerNorm(d_model)
        self.register_buffer("pos", build_positionals(max_len, d_model), persistent=False)

    def forward(self, x: Tensor) -> Tensor:
        out = self.lnorm(self.embedding(x))
        return out + self.pos[: x.shape[1]]


class DecoderPrenet(nn.Module):
    def __init__(self, n_mels: int, d_model: int, max_len: int = 4096):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_mels, d_model), nn.ReLU(),
                                 nn.Dropout(0.5), nn.Linear(d_model, d_model))
        self.register_buffer("pos", build_positionals(max_len, d_model), persistent=False)

    def forward(self, mels: Tensor) -> Tensor:
        out = self.net(mels)
        return out + self.pos[: mels.shape[1]]


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
