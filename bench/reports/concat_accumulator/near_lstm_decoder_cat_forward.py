# Source: https://discuss.pytorch.org/t/why-does-autograd-track-things-like-torch-cat/105666
# Report: time-series LSTM autoencoder rebuilds its output one element at a time with x = torch.cat([x, x_i]) inside the decoding loop; answer: cat is tracked by autograd, the whole growing sequence is kept for backward
# Shape: Decoder.forward collects the per-step outputs in a list and concatenates once after the decoding loop (the graph through the outputs is intended: they are the reconstruction)
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, n_features, hidden):
        super().__init__()
        self.lstm = nn.LSTM(n_features, hidden, batch_first=True)

    def forward(self, seq):
        _, (h, c) = self.lstm(seq)
        return h[-1], c[-1]


class Decoder(nn.Module):
    def __init__(self, n_features, hidden, seq_len):
        super().__init__()
        self.seq_len = seq_len
        self.cell = nn.LSTMCell(n_features, hidden)
        self.dense = nn.Linear(hidden, n_features)

    def forward(self, hs, cs):
        x_i = self.dense(hs)
        steps = [x_i]
        hs_i, cs_i = hs, cs
        # reconstruct the remaining elements in reverse order
        for i in range(1, self.seq_len):
            hs_i, cs_i = self.cell(x_i, (hs_i, cs_i))
            x_i = self.dense(hs_i)
            steps.append(x_i)
        x = torch.cat(steps)
        return x.view(self.seq_len, -1, x_i.size(-1)).transpose(0, 1).flip(1)


class SeqAutoencoder(nn.Module):
    def __init__(self, n_features=1, hidden=64, seq_len=140):
        super().__init__()
        self.encoder = Encoder(n_features, hidden)
        self.decoder = Decoder(n_features, hidden, seq_len)

    def forward(self, seq):
        hs, cs = self.encoder(seq)
        return self.decoder(hs, cs)


def train_epoch(model, loader, optimizer, device="cuda"):
    model.train()
    total = 0.0
    for seq in loader:
        seq = seq.to(device)
        optimizer.zero_grad()
        loss = nn.functional.l1_loss(model(seq), seq)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / max(len(loader), 1)
