# Source: https://github.com/sgadgil6/cnslab_fmri/issues/4
# Report: the fix offered in the thread stops passing the stored hidden state: each sequence starts from a fresh state, and backward no longer needs retain_graph.
# Shape: same LSTM model and loop; forward lets the LSTM start from zeros and drops the returned state, and backward frees the graph.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class FmriLSTM(nn.Module):
    def __init__(self, input_dim, hidden_dim):
        super().__init__()
        self.lstm = nn.LSTM(input_dim, hidden_dim, num_layers=1, batch_first=True)
        self.head = nn.Sequential(nn.Dropout(0.2), nn.Linear(hidden_dim, 1))

    def forward(self, x):
        lstm_out, _ = self.lstm(x)
        return torch.sigmoid(self.head(lstm_out[:, -1, :])).squeeze(-1)


def run_training(model, loader, optimizer, epochs):
    criterion = nn.BCELoss()
    for epoch in range(epochs):
        for series, label in loader:
            optimizer.zero_grad()
            loss = criterion(model(series.cuda()), label.float().cuda())
            loss.backward()
            optimizer.step()
