# Source: https://github.com/facebookresearch/pytext/pull/650
# Report: workflow.get_logits() aggregated every batch's logits and ran out of memory; the fix writes them out as they come, handles a tuple returned by forward(), and calls forward under torch.no_grad().
# Shape: forward returns a tuple; the first element is unpacked and kept for the whole dataset, with autograd still recording (no no_grad, no backward).
# Expect: TML001 line 25; TML003 line 24
import torch
import torch.nn as nn


class DocClassifier(nn.Module):
    def __init__(self, vocab=20000, dim=128, classes=5):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim)
        self.out = nn.Linear(dim, classes)

    def forward(self, tokens, offsets):
        rep = self.embed(tokens, offsets)
        return self.out(rep), rep


def get_logits(model, batches, device="cuda"):
    model = model.to(device).eval()
    all_logits = []
    for tokens, offsets in batches:
        logits, _representation = model(tokens.to(device), offsets.to(device))  # expect: TML003
        all_logits.append(logits)  # expect: TML001
    return torch.cat(all_logits).cpu()
