# Source: https://github.com/mravanelli/pytorch-kaldi/pull/41
# Report: GPU memory kept growing during the forward pass when not training (dev set), forcing much smaller dev batch sizes; hidden-state graphs accumulated across minibatches until the forward was wrapped in torch.no_grad().
# Shape: the dev loop carries the recurrent state from chunk to chunk of an utterance stream through a helper that returns (output, state), with autograd on and no backward.
# Expect: TML005 line 29; TML003 line 29
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
    for chunk, targets in chunk_stream:
        logits, state = forward_chunk(model, chunk, state, device)  # expect: TML005, TML003
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), targets.to(device).flatten())
        total_loss += loss.item() * targets.numel()
        total_frames += targets.numel()
    return total_loss / total_frames
