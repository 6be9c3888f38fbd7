# Source: https://github.com/thuml/Autoformer/blob/main/exp/exp_main.py
# Report: Exp_Main.test() evaluates under torch.no_grad(); variant keeps the raw GPU outputs and converts once after the loop
# Shape: no graph (no_grad), but preds/trues outlive the loop and receive CUDA tensors each batch: the whole test set's forecasts sit on the GPU until the final torch.cat
# Expect: TML004 lines 62, 63
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
                pred = outputs.detach()
                true = batch_y.detach()
                preds.append(pred)  # expect: TML004
                trues.append(true)  # expect: TML004
        preds = torch.cat(preds, dim=0).cpu().numpy()
        trues = torch.cat(trues, dim=0).cpu().numpy()
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
