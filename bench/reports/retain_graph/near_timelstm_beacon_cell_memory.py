# Source: https://github.com/whatshow/NN-TimeLTSM/blob/0ff027c35b96969c95c919b762aaed6e3ed06b54/Examples/TestAbility/rnn_lstm_time3_cm.py
# Report: audit: a time-aware LSTM predicts per beacon and feeds its cell memory pred_cm into the next beacon of the same trace; the repository detaches pred_cm after every step; the variant it avoided keeps the cell memory attached and backpropagates every beacon with retain_graph=True, stepping once per trace
# Shape: as in the repository: pred_cm is still rebound from the model call on itself, but each beacon does a plain backward and step and then detaches the cell memory before the next beacon (epoch loss taken with .item())
# Expect: near-miss: must be silent
import os

import numpy as np
import torch
from torch import nn

from timelstm import TimeLSTM


class BeaconMCSTrainer:
    eps = 1e-8
    patience = 30

    def __init__(self, folder, device, hidden, in_features, lr=1e-3):
        self.folder = folder
        self.device = device
        self.lstm = TimeLSTM(in_features, hidden).to(device)
        self.dnn1 = nn.Linear(hidden, hidden).double().to(device)
        self.dnn2 = nn.Linear(hidden, 1).double().to(device)
        self.criterion = nn.MSELoss(reduction="none")
        params = [{"params": m.parameters()} for m in (self.lstm, self.dnn1, self.dnn2)]
        self.optimizer = torch.optim.Adam(params, lr=lr)
        self.scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(self.optimizer, factor=0.91, patience=0)

    def head(self, pred_h):
        return self.dnn2(torch.tanh(self.dnn1(pred_h.squeeze(-1))))

    def masked_loss(self, pred, y):
        nonzero = torch.where(y != 0)
        return self.criterion(pred, y)[nonzero].mean()

    def batch(self, x_all, y):
        x = torch.from_numpy(x_all[:, :, 0:1]).to(self.device)
        t = torch.from_numpy(x_all[:, :, 1:2]).to(self.device)
        return x, t, torch.from_numpy(y).to(self.device)

    def __call__(self, train_x, train_y, epochs):
        for m in (self.lstm, self.dnn1, self.dnn2):
            m.train()
        bad_epochs, prev = 0, 0.0
        for epoch in range(epochs):
            loss_total, trials = 0.0, 0
            for file_x, file_y in zip(train_x, train_y):
                pred_cm = None
                for x_all, y_np in zip(file_x, file_y):
                    x, t, y = self.batch(x_all, y_np)
                    # the cell memory of the previous beacon seeds this one
                    pred_h, pred_cm = self.lstm(x, cm=pred_cm, t=t)
                    loss = self.masked_loss(self.head(pred_h), y)
                    self.optimizer.zero_grad()
                    loss.backward()
                    self.optimizer.step()
                    loss_total += loss.item()
                    trials += 1
                    # cut the history: the next beacon starts from plain values
                    pred_cm = pred_cm.detach()
            loss_aver = loss_total / max(trials, 1)
            self.scheduler.step(loss_aver)
            print("    - epo %d/%d: the loss is %.6f" % (epoch + 1, epochs, loss_aver))
            bad_epochs = bad_epochs + 1 if loss_aver - prev >= self.eps else 0
            prev = loss_aver
            if bad_epochs >= self.patience:
                break
        torch.save(self.lstm.state_dict(), os.path.join(self.folder, "lstm.pkl"))
        return np.float64(prev)
