# Source: https://github.com/facebookresearch/pytext/pull/650
# Report: the change stops aggregating logits, writes each batch's logits to the output file as soon as they are computed, and runs forward under torch.no_grad().
# Shape: same tuple-returning model; each batch's logits are written out and nothing outlives the iteration.
# Expect: near-miss: must be silent
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


def get_logits(model, batches, out_path, device="cuda"):
    model = model.to(device).eval()
    with open(out_path, "w") as out, torch.no_grad():
        for tokens, offsets in batches:
            logits, _representation = model(tokens.to(device), offsets.to(device))
            for row in logits.cpu().tolist():
                out.write("\t".join(f"{v:.6f}" for v in row) + "\n")
