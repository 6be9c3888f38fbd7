# Modelled on: https://learn.biosrag.com/ai/rnn-training-4.html
# Report: "Across time steps in the same segment keep hidden connected; across batches detach" — hidden is re-initialised per batch here.
import torch
import torch.nn as nn


def train(cell, head, batches, optimizer, hidden_size):
    criterion = nn.MSELoss()
    for seq, target in batches:
        h = torch.zeros(seq.size(1), hidden_size, device=seq.device)
        for t in range(seq.size(0)):
            h = cell(seq[t], h)
        loss = criterion(head(h), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
