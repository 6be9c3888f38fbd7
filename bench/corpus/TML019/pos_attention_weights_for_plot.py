# Modelled on: https://github.com/meta-pytorch/opacus/issues/176
# Report: activations kept by the model itself stay alive after the step (there: forward hooks storing activations were not freed).
import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, dim, heads=8):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        attn = (q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5).softmax(dim=-1)
        self.attn_map = attn  # expect: TML019
        return self.proj((attn @ v).transpose(1, 2).reshape(b, n, d))
