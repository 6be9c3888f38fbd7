# Modelled on: https://github.com/yunjey/pytorch-tutorial/issues/90
# Report: the tutorial's answer: detach the states at every step so backprop stops at the batch boundary (truncated BPTT).
import torch
import torch.nn as nn


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def train(model, ids, seq_length, init_states, optimizer):
    criterion = nn.CrossEntropyLoss()
    states = init_states
    for i in range(0, ids.size(1) - seq_length, seq_length):
        inputs = ids[:, i:i + seq_length].cuda()
        targets = ids[:, i + 1:i + 1 + seq_length].cuda()
        states = repackage_hidden(states)
        outputs, states = model(inputs, states)
        loss = criterion(outputs, targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
