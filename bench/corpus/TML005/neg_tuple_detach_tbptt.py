# Modelled on: https://github.com/dpressel/dliss-tutorial/issues/1
# Report: "At every step of training, we will detach our hidden states" — the tuple form of the fix.
import torch.nn as nn
from tqdm import tqdm


def train_epoch(model, batches, optimizer, device):
    h = c = None
    for x, y in tqdm(batches):
        x, y = x.to(device), y.to(device)
        state = None if h is None else (h, c)
        logits, (h, c) = model(x, state)
        loss = nn.functional.cross_entropy(logits.transpose(1, 2), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        h, c = tuple(t.detach() for t in (h, c))
