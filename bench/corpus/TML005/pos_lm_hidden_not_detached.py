# Modelled on: https://github.com/yunjey/pytorch-tutorial/issues/90
# Report: a reader asked why the language model calls `states = detach(states)`; without it the states chain every batch's graph to the previous one.
import torch
import torch.nn as nn


class WordLSTM(nn.Module):
    def __init__(self, vocab, dim, layers):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.rnn = nn.LSTM(dim, dim, layers, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens, state):
        y, state = self.rnn(self.emb(tokens), state)
        return self.head(y).flatten(0, 1), state


def train(model, ids, seq_length, num_layers, batch_size, dim, optimizer):
    criterion = nn.CrossEntropyLoss()
    states = (torch.zeros(num_layers, batch_size, dim, device="cuda"),
              torch.zeros(num_layers, batch_size, dim, device="cuda"))
    for i in range(0, ids.size(1) - seq_length, seq_length):
        inputs = ids[:, i:i + seq_length].cuda()
        targets = ids[:, i + 1:i + 1 + seq_length].cuda()
        outputs, states = model(inputs, states)  # expect: TML005
        loss = criterion(outputs, targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward(retain_graph=True)  # expect: TML006
        optimizer.step()
