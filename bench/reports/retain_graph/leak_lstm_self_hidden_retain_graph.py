# Source: https://github.com/sgadgil6/cnslab_fmri/issues/4
# Report: training the fMRI LSTM failed with "backward through the graph a second time"; adding retain_graph=True made the buffers grow until OOM. The model kept the LSTM's hidden state on self in forward.
# Shape: forward feeds self.hidden into the LSTM and rebinds it from the LSTM's output, so each batch's graph hangs off the next; the loop silences the error with retain_graph=True.
# Expect: TML006 line 28; TML005 line 18
import torch
import torch.nn as nn


class FmriLSTM(nn.Module):
    def __init__(self, input_dim, hidden_dim, batch_size, device):
        super().__init__()
        self.lstm = nn.LSTM(input_dim, hidden_dim, num_layers=1, batch_first=True)
        self.head = nn.Sequential(nn.Dropout(0.2), nn.Linear(hidden_dim, 1))
        self.hidden = (torch.zeros(1, batch_size, hidden_dim, device=device),
                       torch.zeros(1, batch_size, hidden_dim, device=device))

    def forward(self, x):
        lstm_out, self.hidden = self.lstm(x, self.hidden)  # expect: TML005
        return torch.sigmoid(self.head(lstm_out[:, -1, :])).squeeze(-1)


def run_training(model, loader, optimizer, epochs):
    criterion = nn.BCELoss()
    for epoch in range(epochs):
        for series, label in loader:
            optimizer.zero_grad()
            loss = criterion(model(series.cuda()), label.float().cuda())
            loss.backward(retain_graph=True)  # expect: TML006
            optimizer.step()
