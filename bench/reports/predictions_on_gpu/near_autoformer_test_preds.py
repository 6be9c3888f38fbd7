# Source: https://github.com/thuml/Autoformer/blob/main/exp/exp_main.py
# Report: Exp_Main.vali() and Exp_Main.test() evaluate under torch.no_grad() and move every batch off the GPU before keeping it
# Shape: test() keeps outputs/batch_y only as .detach().cpu().numpy() arrays; vali() appends a loss computed from CPU copies, so neither list holds device memory
# Expect: near-miss: must be silent
import os

import numpy as np
import torch
import torch.nn as nn


class ForecastExperiment:
    def __init__(self, args, model, device):
        self.args = args
        self.device = device
        self.model = model.float().to(device)

    def _decoder_input(self, batch_y):
        zeros = torch.zeros_like(batch_y[:, -self.args.pred_len:, :]).float()
        return torch.cat([batch_y[:, :self.args.label_len, :], zeros], dim=1).float().to(self.device)

    def _forward(self, batch_x, batch_x_mark, dec_inp, batch_y_mark):
        if self.args.output_attention:
            return self.model(batch_x, batch_x_mark, dec_inp, batch_y_mark)[0]
        return self.model(batch_x, batch_x_mark, dec_inp, batch_y_mark)

    def vali(self, vali_loader, criterion):
        total_loss = []
        self.model.eval()
        with torch.no_grad():
            for batch_x, batch_y, batch_x_mark, batch_y_mark in vali_loader:
                batch_x = batch_x.float().to(self.device)
                batch_y = batch_y.float()
                batch_x_mark = batch_x_mark.float().to(self.device)
                batch_y_mark = batch_y_mark.float().to(self.device)
                outputs = self._forward(batch_x, batch_x_mark, self._decoder_input(batch_y), batch_y_mark)
                f_dim = -1 if self.args.features == "MS" else 0
                outputs = outputs[:, -self.args.pred_len:, f_dim:]
                batch_y = batch_y[:, -self.args.pred_len:, f_dim:].to(self.device)
                pred = outputs.detach().cpu()
                true = batch_y.detach().cpu()
                loss = criterion(pred, true)
                total_loss.append(loss)
        self.model.train()
        return np.average(total_loss)

    def test(self, test_loader, setting):
        preds, trues = [], []
        self.model.eval()
        with torch.no_grad():
            for i, (batch_x, batch_y, batch_x_mark, batch_y_mark) in enumerate(test_loader):
                batch_x = batch_x.float().to(self.device)
                batch_y = batch_y.float().to(self.device)
                batch_x_mark = batch_x_mark.float().to(self.device)
                batch_y_mark = batch_y_mark.float().to(self.device)
                outputs = self._forward(batch_x, batch_x_mark, self._decoder_input(batch_y), batch_y_mark)
                f_dim = -1 if self.args.features == "MS" else 0
                outputs = outputs[:, -self.args.pred_len:, f_dim:]
                batch_y = batch_y[:, -self.args.pred_len:, f_dim:]
                pred = outputs.detach().cpu().numpy()
                true = batch_y.detach().cpu().numpy()
                preds.append(pred)
                trues.append(true)
        preds = np.concatenate(preds, axis=0)
        trues = np.concatenate(trues, axis=0)
        mse = float(np.mean((preds - trues) ** 2))
        mae = float(np.mean(np.abs(preds - trues)))
        folder = os.path.join("./results", setting)
        os.makedirs(folder, exist_ok=True)
        np.save(os.path.join(folder, "pred.npy"), preds)
        print(f"mse:{mse}, mae:{mae}")
        return mse, mae


def run(args, model, device, vali_loader, test_loader, setting):
    exp = ForecastExperiment(args, model, device)
    print("vali", exp.vali(vali_loader, nn.MSELoss()))
    return exp.test(test_loader, setting)
