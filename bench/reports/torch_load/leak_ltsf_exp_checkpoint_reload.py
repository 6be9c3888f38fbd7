# Source: https://github.com/cure-lab/LTSF-Linear/blob/main/exp/exp_main.py
# Report: long-horizon forecasting experiment driver: after early stopping, test(test=1) and predict(load=True) reload checkpoint.pth with a bare torch.load before copying it into the model
# Shape: the checkpoint was saved from the GPU model (EarlyStopping saves model.state_dict()), so torch.load with no map_location materialises every tensor on the device it was saved from (cuda:0) before load_state_dict copies it, a second full copy of the weights on GPU 0 whatever self.device is
# Expect: TML011 lines 88, 108
import os

import numpy as np
import torch
import torch.nn as nn
from torch import optim


class EarlyStopping:
    def __init__(self, patience=7):
        self.patience, self.counter, self.best, self.early_stop = patience, 0, None, False

    def __call__(self, val_loss, model, path):
        if self.best is None or val_loss < self.best:
            self.best, self.counter = val_loss, 0
            torch.save(model.state_dict(), os.path.join(path, "checkpoint.pth"))
        else:
            self.counter += 1
            self.early_stop = self.counter >= self.patience


class ForecastExp:
    def __init__(self, args, build_model, data_provider):
        self.args = args
        self.device = torch.device(f"cuda:{args.gpu}")
        self.model = build_model(args).float().to(self.device)
        self.data_provider = data_provider

    def _forward(self, batch_x, batch_y, batch_x_mark, batch_y_mark):
        dec_inp = torch.zeros_like(batch_y[:, -self.args.pred_len:, :])
        dec_inp = torch.cat([batch_y[:, :self.args.label_len, :], dec_inp], dim=1).to(self.device)
        if "Linear" in self.args.model:
            outputs = self.model(batch_x)
        else:
            outputs = self.model(batch_x, batch_x_mark, dec_inp, batch_y_mark)
        f_dim = -1 if self.args.features == "MS" else 0
        return outputs[:, -self.args.pred_len:, f_dim:], batch_y[:, -self.args.pred_len:, f_dim:]

    def _to_device(self, *tensors):
        return [t.float().to(self.device) for t in tensors]

    def vali(self, loader, criterion):
        losses = []
        self.model.eval()
        with torch.no_grad():
            for batch in loader:
                bx, by, bxm, bym = self._to_device(*batch)
                outputs, target = self._forward(bx, by, bxm, bym)
                loss = criterion(outputs.detach().cpu(), target.detach().cpu())
                losses.append(loss)
        self.model.train()
        return np.average(losses)

    def train(self, setting):
        _, train_loader = self.data_provider(self.args, "train")
        _, vali_loader = self.data_provider(self.args, "val")
        path = os.path.join(self.args.checkpoints, setting)
        os.makedirs(path, exist_ok=True)
        stopper = EarlyStopping(self.args.patience)
        optimizer = optim.Adam(self.model.parameters(), lr=self.args.learning_rate)
        criterion = nn.MSELoss()
        for epoch in range(self.args.train_epochs):
            train_loss = []
            self.model.train()
            for batch in train_loader:
                optimizer.zero_grad()
                bx, by, bxm, bym = self._to_device(*batch)
                outputs, target = self._forward(bx, by, bxm, bym)
                loss = criterion(outputs, target)
                train_loss.append(loss.item())
                loss.backward()
                optimizer.step()
            vali_loss = self.vali(vali_loader, criterion)
            print(f"epoch {epoch + 1} train {np.average(train_loss):.7f} vali {vali_loss:.7f}")
            stopper(vali_loss, self.model, path)
            if stopper.early_stop:
                break
        return self.model

    def test(self, setting, test=0):
        _, test_loader = self.data_provider(self.args, "test")
        if test:
            ckpt = os.path.join(self.args.checkpoints, setting, "checkpoint.pth")
            self.model.load_state_dict(torch.load(ckpt))  # expect: TML011
        preds, trues = [], []
        self.model.eval()
        with torch.no_grad():
            for batch in test_loader:
                bx, by, bxm, bym = self._to_device(*batch)
                outputs, target = self._forward(bx, by, bxm, bym)
                preds.append(outputs.detach().cpu().numpy())
                trues.append(target.detach().cpu().numpy())
        preds = np.concatenate(preds)
        trues = np.concatenate(trues)
        mse = float(np.mean((preds - trues) ** 2))
        mae = float(np.mean(np.abs(preds - trues)))
        print(f"mse:{mse}, mae:{mae}")
        return mse, mae

    def predict(self, setting, load=False):
        pred_data, pred_loader = self.data_provider(self.args, "pred")
        if load:
            best = os.path.join(self.args.checkpoints, setting, "checkpoint.pth")
            self.model.load_state_dict(torch.load(best))  # expect: TML011
        preds = []
        self.model.eval()
        with torch.no_grad():
            for batch in pred_loader:
                bx, by, bxm, bym = self._to_device(*batch)
                outputs, _ = self._forward(bx, by, bxm, bym)
                preds.append(outputs.detach().cpu().numpy())
        preds = np.concatenate(preds)
        return pred_data.inverse_transform(preds) if pred_data.scale else preds
