# Source: https://github.com/pytorch/pytorch/issues/2198
# Report: memory grew in an LSTM/RNN training loop because the hidden state kept every previous step's graph alive; the answer: add a periodic detach (BPTT), as repackage_hidden does in the word_language_model example.
# Shape: a stateful module keeps its (h, c) on self between forward calls and rebinds it from the LSTM's output every call; online forecasting over a stream (autograd on, no backward) never detaches it.
# Expect: TML005 line 18
import torch
import torch.nn as nn


class StatefulLSTM(nn.Module):
    def __init__(self, features, hidden, batch_size):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)
        self.hidden = (torch.zeros(1, batch_size, hidden), torch.zeros(1, batch_size, hidden))

    def forward(self, x):
        out, new_hidden = self.lstm(x, self.hidden)
        self.hidden = new_hidden  # expect: TML005
        return self.head(out[:, -1])


def forecast_stream(model, stream):
    forecasts = []
    for window in stream:
        forecasts.append(model(window).squeeze(-1).tolist())
    return forecasts
