# Modelled on: https://github.com/dpressel/dliss-tutorial/issues/1
# Report: contextual-embedding training initialises each batch from the previous hidden state; the tutorial explains why h and c must be detached.
import torch
import torch.nn as nn
from tqdm import tqdm


class CharLSTM(nn.Module):
    def __init__(self, vocab, hidden=512):
        super().__init__()
        self.emb = nn.Embedding(vocab, 128)
        self.rnn = nn.LSTM(128, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, x, state):
        y, state = self.rnn(self.emb(x), state)
        return self.out(y), state


def train_epoch(model, batches, optimizer, device):
    h = c = None
    for x, y in tqdm(batches):
        x, y = x.to(device), y.to(device)
        state = None if h is None else (h, c)
        logits, (h, c) = model(x, state)  # expect: TML005
        loss = nn.functional.cross_entropy(logits.transpose(1, 2), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
