# Modelled on: https://discuss.pytorch.org/t/gpu-memory-increase-while-i-wanna-to-backward-with-accumulative-loss/43284
# Report: per-sequence losses of variable-length items summed into one loss, then backward once: the sum is the intended graph, not a leak.
import torch
import torch.nn.functional as F


def step(model, optimizer, sequences, targets):
    optimizer.zero_grad()
    loss = 0
    for seq, tgt in zip(sequences, targets):
        logits = model(seq.unsqueeze(0))
        loss = loss + F.cross_entropy(logits.squeeze(0), tgt)
    loss = loss / len(sequences)
    loss.backward()
    optimizer.step()
    return loss.item()
