# Source: https://github.com/thuml/Time-Series-Library/issues/695
# Report: user asks why vali()/test() move pred/true to the CPU and proposes keeping them on the GPU; the maintainer answers "you can also compute on the GPU", but keeping them there holds every test batch's outputs on the device until the end
# Shape: the forecasting experiment class's test() with the CPU copies removed, as proposed: preds/trues lists of device tensors, concatenated after the loop
# Expect: TML004 line 43; TML004 line 44
import numpy as np
import torch


def metric(pred, true):
    mae = torch.mean(torch.abs(pred - true)).item()
    mse = torch.mean((pred - true) ** 2).item()
    return mae, mse


class ExpLongTermForecast:
    def __init__(self, args, model, device):
        self.args = args
        self.model = model.to(device)
        self.device = device

    def _decoder_input(self, batch_y):
        dec_inp = torch.zeros_like(batch_y[:, -self.args.pred_len:, :]).float()
        dec_inp = torch.cat([batch_y[:, :self.args.label_len, :], dec_inp], dim=1)
        return dec_inp.float().to(self.device)

    def test(self, test_loader):
        preds = []
        trues = []
        self.model.eval()
        with torch.no_grad():
            for i, (batch_x, batch_y, batch_x_mark, batch_y_mark) in enumerate(test_loader):
                batch_x = batch_x.float().to(self.device)
                batch_y = batch_y.float().to(self.device)
                batch_x_mark = batch_x_mark.float().to(self.device)
                batch_y_mark = batch_y_mark.float().to(self.device)
                dec_inp = self._decoder_input(batch_y)

                outputs = self.model(batch_x, batch_x_mark, dec_inp, batch_y_mark)
                f_dim = -1 if self.args.features == "MS" else 0
                outputs = outputs[:, -self.args.pred_len:, f_dim:]
                batch_y = batch_y[:, -self.args.pred_len:, f_dim:]

                preds.append(outputs)  # expect: TML004
                trues.append(batch_y)  # expect: TML004

        preds = torch.cat(preds, dim=0)
        trues = torch.cat(trues, dim=0)
        mae, mse = metric(preds, trues)
        print(f"mse:{mse}, mae:{mae}")
        np.save("pred.npy", preds.cpu().numpy())
        return mae, mse
