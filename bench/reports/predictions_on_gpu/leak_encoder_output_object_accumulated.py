# Source: https://github.com/JohnGiorgi/DeCLUTR/pull/151
# Report: the Encoder accumulated embedding tensors on the GPU when run on cuda_device=0 and quickly ran out of memory; the fix accumulates them on the CPU.
# Shape: the model returns an output object; the encoder reads its .pooled attribute (under no_grad) and keeps it on the device for every batch of the corpus.
# Expect: TML004 line 38
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class EncoderOutput:
    pooled: torch.Tensor
    token_states: torch.Tensor


class SentenceEncoder(nn.Module):
    def __init__(self, vocab=30522, dim=256):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mix = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, 4, batch_first=True), 2)

    def forward(self, input_ids):
        states = self.mix(self.embed(input_ids))
        return EncoderOutput(pooled=states.mean(dim=1), token_states=states)


class Encoder:
    def __init__(self, model: SentenceEncoder, cuda_device=0):
        self.device = torch.device(f"cuda:{cuda_device}")
        self.model = model.to(self.device).eval()

    def __call__(self, batches):
        embeddings = []
        with torch.no_grad():
            for input_ids in batches:
                output = self.model(input_ids.to(self.device))
                embeddings.append(output.pooled)  # expect: TML004
        return torch.cat(embeddings)
