# Source: https://github.com/pytorch/pytorch/issues/2198
# Report: the word_language_model example repackages the hidden state (hidden = repackage_hidden(hidden)) so that backpropagation is truncated at each batch.
# Shape: same stateful module and stream; the state kept on self is detached tuple-wise before it is stored.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


class StatefulLSTM(nn.Module):
    def __init__(self, features, hidden, batch_size):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)
        self.hidden = (torch.zeros(1, batch_size, hidden), torch.zeros(1, batch_size, hidden))

    def forward(self, x):
        out, new_hidden = self.lstm(x, self.hidden)
        self.hidden = repackage_hidden(new_hidden)
        return self.head(out[:, -1])


def forecast_stream(model, stream):
    forecasts = []
    for window in stream:
        forecasts.append(model(window).squeeze(-1).tolist())
    return forecasts
