# Source: https://github.com/mravanelli/pytorch-kaldi/pull/41
# Report: the merged fix runs the dev forward inside torch.no_grad(), so no hidden-state graph is built between minibatches.
# Shape: same chunk stream and helper carrying the state, under torch.no_grad().
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class AcousticModel(nn.Module):
    def __init__(self, feats=40, hidden=550, senones=3000):
        super().__init__()
        self.rnn = nn.GRU(feats, hidden, num_layers=4, batch_first=True)
        self.out = nn.Linear(hidden, senones)

    def forward(self, x, state=None):
        y, state = self.rnn(x, state)
        return self.out(y), state


def forward_chunk(model, chunk, state, device):
    return model(chunk.to(device), state)


def decode_dev(model, chunk_stream, device="cuda"):
    model.eval()
    state = None
    total_frames, total_loss = 0, 0.0
    with torch.no_grad():
        for chunk, targets in chunk_stream:
            logits, state = forward_chunk(model, chunk, state, device)
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), targets.to(device).flatten())
            total_loss += loss.item() * targets.numel()
            total_frames += targets.numel()
    return total_loss / total_frames
