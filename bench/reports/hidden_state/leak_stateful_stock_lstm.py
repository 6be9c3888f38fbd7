# Source: https://github.com/james77777778/CCBDA-2019-Spring-0750730/blob/3488dddc32adfc788b9e34fe7ff9b69fd185ce33/HW3/train.py
# Report: audit of the per-ticker stock LSTM trainer: (h, c) are carried from batch to batch through the unshuffled loader; the repo rewraps them as Variable(h.data) after each forward, without that every batch's graph hangs off the previous batch's state
# Shape: Stock_LSTM takes and returns (h, c); the epoch loop feeds the returned state into the next batch and backpropagates each batch, never cutting the state from its history
# Expect: TML005 line 41
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class StockLSTM(nn.Module):
    def __init__(self, in_size=20, hid_size=256, layers=2):
        super().__init__()
        self.lstm = nn.LSTM(in_size, hid_size, num_layers=layers, batch_first=True)
        self.head = nn.Sequential(nn.Linear(hid_size, 256), nn.Linear(256, 1))

    def forward(self, x, h_state, c_state):
        out, (h_state, c_state) = self.lstm(x, (h_state, c_state))
        return self.head(out), (h_state, c_state)


def zeros_state(batch, hid, device, layers=2):
    return (torch.zeros(layers, batch, hid, device=device),
            torch.zeros(layers, batch, hid, device=device))


def train_ticker(train_set, valid_set, epochs=500, batch_size=60, hid=256, device="cuda"):
    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=False, drop_last=True)
    valid_loader = DataLoader(valid_set, batch_size=1, shuffle=False)
    net = StockLSTM(hid_size=hid).to(device)
    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(net.parameters(), lr=5e-5)
    history = {"train": [], "valid": []}
    for epoch in range(epochs):
        net.train()
        epoch_loss = 0.0
        h_state, c_state = zeros_state(batch_size, hid, device)
        for batch in train_loader:
            inputs, labels = batch["Sequence"].to(device), batch["Target"].to(device)
            optimizer.zero_grad()
            pred, (h_state, c_state) = net(inputs, h_state, c_state)  # expect: TML005
            loss = criterion(pred[:, -1, :].squeeze(), labels)
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item() * inputs.size(0)
        history["train"].append(epoch_loss / len(train_set))
        history["valid"].append(validate(net, valid_loader, criterion, hid, device))
        print(f"[{epoch + 1}] train {history['train'][-1]:.7f} valid {history['valid'][-1]:.7f}")
    return net, history


@torch.no_grad()
def validate(net, loader, criterion, hid, device):
    net.eval()
    total, preds = 0.0, []
    h_state, c_state = zeros_state(1, hid, device)
    for batch in loader:
        inputs, labels = batch["Sequence"].to(device), batch["Target"].to(device)
        pred, (h_state, c_state) = net(inputs, h_state, c_state)
        total += criterion(pred[:, -1, :].squeeze(), labels.squeeze()).item()
        preds.append(pred[:, -1, 0].cpu().numpy())
    return total / max(len(preds), 1)
