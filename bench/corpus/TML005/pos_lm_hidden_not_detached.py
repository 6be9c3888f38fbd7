# Modelled on: https://github.com/yunjey/pytorch-tutorial/issues/90
# Report: a reader asked why the language model calls `states = detach(states)`; without it the states chain every batch's graph to the previous one.
import torch
import torch.nn as nn


class RNNLM(nn.Module):
    def __init__(self, vocab_size, embed_size, hidden_size, num_layers):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_size)
        self.lstm = nn.LSTM(embed_size, hidden_size, num_layers, batch_first=True)
        self.linear = nn.Linear(hidden_size, vocab_size)

    def forward(self, x, h):
        out, (h, c) = self.lstm(self.embed(x), h)
        return self.linear(out.reshape(-1, out.size(2))), (h, c)


def train(model, ids, seq_length, num_layers, batch_size, hidden_size, optimizer):
    criterion = nn.CrossEntropyLoss()
    states = (torch.zeros(num_layers, batch_size, hidden_size).cuda(),
              torch.zeros(num_layers, batch_size, hidden_size).cuda())
    for i in range(0, ids.size(1) - seq_length, seq_length):
        inputs = ids[:, i:i + seq_length].cuda()
        targets = ids[:, i + 1:i + 1 + seq_length].cuda()
        outputs, states = model(inputs, states)  # expect: TML005
        loss = criterion(outputs, targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward(retain_graph=True)  # expect: TML006
        optimizer.step()
