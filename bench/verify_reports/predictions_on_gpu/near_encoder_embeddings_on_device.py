# Source: https://github.com/JohnGiorgi/DeCLUTR/pull/151
# Report: the fix accumulates the embeddings on the CPU.
# Shape: the same encoder loop keeps output.pooled.cpu().
# Expect: near-miss: must be silent
from dataclasses import dataclass

import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


@dataclass
class EncoderOutput:
    pooled: torch.Tensor


class SentenceEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.EmbeddingBag(500, 64)
        self.proj = nn.Linear(64, 64)

    def forward(self, tokens):
        return EncoderOutput(self.proj(self.embed(tokens)))


encoder = SentenceEncoder().to(device).eval()
embeddings = []
for batch in range(24):
    tokens = torch.randint(0, 500, (32, 20), device=device)
    with torch.no_grad():
        output = encoder(tokens)
    embeddings.append(output.pooled.cpu())
print(torch.cat(embeddings).shape)
