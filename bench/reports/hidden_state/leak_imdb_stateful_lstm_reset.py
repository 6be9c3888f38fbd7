# Source: https://github.com/BoChenUIUC/CS547-DL/blob/2dc38bf941da50226c64b172e85883f14c5c2f18/hw5/2b/RNN_model.py
# Report: audit of an IMDB sentiment LSTM built from a StatefulLSTM cell that keeps self.h / self.c: the repo resets the state at the top of RNN_model.forward(); this is the variant it avoided, where reset_state() moves to the start of each epoch so self.h / self.c stay graph-attached from one batch into the next
# Shape: the cell still rebinds self.h, self.c from their previous values, but nothing resets or detaches them between batches; the second backward fails on the freed graph, so the loop adds retain_graph=True and every batch's graph stays linked to all earlier ones
# Expect: TML005 line 26; TML006 line 78
import numpy as np
import torch
import torch.nn as nn


class StatefulLSTM(nn.Module):
    def __init__(self, in_size, out_size):
        super().__init__()
        self.cell = nn.LSTMCell(in_size, out_size)
        self.out_size = out_size
        self.h = None
        self.c = None

    def reset_state(self):
        self.h = None
        self.c = None

    def forward(self, x):
        if self.h is None:
            zeros = x.new_zeros(x.size(0), self.out_size)
            self.h, self.c = zeros, zeros.clone()
        self.h, self.c = self.cell(x, (self.h, self.c))  # expect: TML005
        return self.h


class SentimentRNN(nn.Module):
    def __init__(self, vocab_size, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, 300)
        self.lstm = StatefulLSTM(300, hidden)
        self.bn = nn.BatchNorm1d(hidden)
        self.fc = nn.Linear(hidden, 1)
        self.loss = nn.BCEWithLogitsLoss()

    def reset_state(self):
        self.lstm.reset_state()

    def forward(self, tokens, target):
        emb = self.embed(tokens)
        steps = []
        for t in range(emb.size(1)):
            steps.append(self.bn(self.lstm(emb[:, t, :])))
        pooled = torch.stack(steps, dim=2).max(dim=2).values
        logit = self.fc(pooled)[:, 0]
        return self.loss(logit, target), logit


def make_batch(reviews, idx, seq_len):
    batch = np.zeros((len(idx), seq_len), dtype=np.int64)
    for row, j in enumerate(idx):
        r = reviews[j]
        if len(r) < seq_len:
            batch[row, :len(r)] = r
        else:
            start = np.random.randint(len(r) - seq_len + 1)
            batch[row] = r[start:start + seq_len]
    return torch.from_numpy(batch)


def train(model, reviews, labels, epochs=20, batch_size=200, seq_len=250):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    history = []
    for epoch in range(epochs):
        model.train()
        model.reset_state()  # state now carries over from batch to batch
        order = np.random.permutation(len(labels))
        epoch_loss, correct = 0.0, 0
        for i in range(0, len(labels), batch_size):
            idx = order[i:i + batch_size]
            data = make_batch(reviews, idx, seq_len).cuda()
            target = torch.as_tensor(labels[idx], dtype=torch.float32).cuda()
            opt.zero_grad()
            loss, logit = model(data, target)
            loss.backward(retain_graph=True)  # expect: TML006
            opt.step()
            epoch_loss += loss.item()
            correct += ((logit >= 0) == (target >= 0.5)).sum().item()
        history.append((epoch_loss, correct / len(labels)))
        print(epoch, history[-1])
    return history
