# Source: https://github.com/whatshow/NN-TimeLTSM/blob/2562a93e2c0b89bb0e8d73abfebde45d9d036ab4/Examples/Test/rnn_lstm_ag_v7.py
# Report: audit: the epoch loop adds every batch's MSE loss tensor into loss_total (`loss_total = loss_total + loss`) without .item()/.detach(), keeps it to the epoch end and feeds the average tensor to ReduceLROnPlateau and the log line
# Shape: a callable experiment class; batches are sliced from numpy arrays, the loss is stepped per batch, and the outliving loss_total sums attached scalars for the whole epoch
# Expect: TML001 line 60
import os

import torch
from torch import nn

from timelstm import TimeLSTM


class AlexGravesLSTMExperiment:
    folder = "rnn_lstm_ag_v7/"
    modelfile = "lstm_alex_graves.pkl"
    eps = 1e-8
    patience = 10

    def build(self, in_features, hidden, device):
        model = nn.Sequential(
            TimeLSTM(in_features, hidden),
            nn.Linear(hidden, hidden),
            nn.Tanh(),
            nn.Linear(hidden, 1),
        )
        return model.to(device)

    def __call__(self, path, device, hidden, in_features, epochs, steps, batch_size, lr,
                 train_x, train_y, test_x):
        self.folder = os.path.join(path, self.folder)
        os.makedirs(self.folder, exist_ok=True)
        ckpt = os.path.join(self.folder, self.modelfile)
        model = self.build(in_features, hidden, device)
        criterion = nn.MSELoss(reduction="mean")
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.91, patience=0)
        if os.path.exists(ckpt):
            model.load_state_dict(torch.load(ckpt, map_location=device))
        else:
            self.fit(model, criterion, optimizer, plateau, device, epochs, steps, batch_size, train_x, train_y)
            torch.save(model.state_dict(), ckpt)
        model.eval()
        with torch.no_grad():
            return model(torch.from_numpy(test_x).to(device))

    def fit(self, model, criterion, optimizer, plateau, device, epochs, steps, batch_size, train_x, train_y):
        model.train()
        bad, prev = 0, 0.0
        for epoch in range(epochs):
            loss_total = 0.0
            for b in range(steps):
                sl = slice(b * batch_size, (b + 1) * batch_size)
                x = torch.from_numpy(train_x[sl]).to(device)
                y = torch.from_numpy(train_y[sl]).to(device).squeeze(-1)
                out = model(x)
                loss = criterion(out, y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                loss_total = loss_total + loss  # expect: TML001
            loss_aver = loss_total / steps
            plateau.step(loss_aver)
            print("    - epo %d/%d: the loss is %.6f" % (epoch + 1, epochs, loss_aver))
            if loss_aver - prev >= self.eps:
                bad += 1
            prev = loss_aver
            if bad >= self.patience:
                print("    - stop: the loss stopped decreasing for %d epochs" % bad)
                break
            if prev <= self.eps:
                print("    - stop: the loss reached its minimum")
                break
