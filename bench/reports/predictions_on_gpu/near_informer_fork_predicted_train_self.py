# Source: https://github.com/zhouhaoyi/Informer2020/blob/0251528e978e1a9a10e611e8335ceca27f3405a8/exp/exp_informer.py
# Report: audit of an Informer fork's Exp_Informer: train() appends every batch's live forecast and its GPU target to self.predicted_train / self.actual_train (lists made in __init__, never cleared, kept across all epochs), and vali() runs the model after model.eval() with no grad-disabled context
# Shape: fixed variant: the per-step history on self keeps detached CPU copies (pred.detach().cpu(), true.cpu()) and vali() is decorated with @torch.no_grad(), as the upstream test path is meant to run
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn


class ForecastExperiment:
    def __init__(self, model, args, device="cuda"):
        self.args = args
        self.device = device
        self.model = model.to(device)
        self.train_curve = []
        self.predicted_train = []
        self.actual_train = []

    def _decoder_input(self, batch_y):
        pad = torch.zeros(batch_y.shape[0], self.args.pred_len, batch_y.shape[-1])
        dec_inp = torch.cat([batch_y[:, : self.args.label_len, :].float(), pad], dim=1)
        return dec_inp.to(self.device)

    def _process_one_batch(self, batch_x, batch_y, x_mark, y_mark):
        batch_x = batch_x.float().to(self.device)
        x_mark = x_mark.float().to(self.device)
        y_mark = y_mark.float().to(self.device)
        outputs = self.model(batch_x, x_mark, self._decoder_input(batch_y), y_mark)
        target = batch_y[:, -self.args.pred_len:, :].float().to(self.device)
        return outputs, target

    def train(self, train_loader, val_loader, epochs):
        optimizer = torch.optim.Adam(self.model.parameters(), lr=self.args.learning_rate)
        criterion = nn.MSELoss()
        for epoch in range(epochs):
            self.model.train()
            epoch_losses = []
            for i, (batch_x, batch_y, x_mark, y_mark) in enumerate(train_loader):
                optimizer.zero_grad()
                pred, true = self._process_one_batch(batch_x, batch_y, x_mark, y_mark)
                self.predicted_train.append(pred.detach().cpu())
                self.actual_train.append(true.cpu())
                loss = criterion(pred, true)
                epoch_losses.append(loss.item())
                loss.backward()
                optimizer.step()
                if (i + 1) % 100 == 0:
                    print(f"\titers: {i + 1}, epoch: {epoch + 1} | loss: {loss.item():.7f}")
            val_loss = self.vali(val_loader, criterion)
            self.train_curve.append(float(np.average(epoch_losses)))
            print(f"epoch {epoch + 1}: train {self.train_curve[-1]:.5f} val {val_loss:.5f}")
        return self.model

    @torch.no_grad()
    def vali(self, loader, criterion):
        self.model.eval()
        losses = []
        for batch_x, batch_y, x_mark, y_mark in loader:
            batch_x = batch_x.float().to(self.device)
            x_mark, y_mark = x_mark.float().to(self.device), y_mark.float().to(self.device)
            pred = self.model(batch_x, x_mark, self._decoder_input(batch_y), y_mark)
            true = batch_y[:, -self.args.pred_len:, :].float()
            loss = criterion(pred.detach().cpu(), true)
            losses.append(loss.item())
        self.model.train()
        return float(np.average(losses))
