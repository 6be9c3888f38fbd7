# Source: https://github.com/pytorch/pytorch/issues/2198
# Report: memory grew in an LSTM loop because the hidden state kept every previous step's graph alive; the answer: detach it periodically, as repackage_hidden does in the word_language_model example.
# Shape: a stateful module keeps its (h, c) on self between forward calls and rebinds it from the LSTM's output; online forecasting over a stream (autograd on, no backward) never detaches it.
# Expect: TML005 line 20
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class OnlineForecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 32, batch_first=True)
        self.head = nn.Linear(32, 1)
        self.hidden = None

    def forward(self, x):
        out, self.hidden = self.lstm(x, self.hidden)  # expect: TML005
        return self.head(out[:, -1])


model = OnlineForecaster().to(device)
forecasts = []
for tick in range(24):
    forecasts.append(model(torch.randn(1, 5, 4, device=device)).item())
print(forecasts[-1])
