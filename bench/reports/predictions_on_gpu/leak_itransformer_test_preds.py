# Source: https://github.com/thuml/iTransformer/blob/0ec7b4fd534fde8e6bfd4b82682fa54325fdc2c4/experiments/exp_long_term_forecasting.py
# Report: audited evaluation code: the iTransformer long-term-forecasting test() collects every batch's forecast and ground truth for the final MSE/MAE; the repository moves each one off the GPU with .detach().cpu().numpy() before appending
# Shape: the forecasts and targets are appended as the CUDA tensors the model and the loader produced (under no_grad, so no graph) and only concatenated and copied to the host after the loop, so the whole test set's outputs sit on the GPU
# Expect: TML004 line 56; TML004 line 57
import os

import numpy as np
import torch

from utils.metrics import metric


class Exp_Long_Term_Forecast(object):
    def __init__(self, args, model_dict, data_provider):
        self.args = args
        self.device = torch.device('cuda:{}'.format(args.gpu))
        self.model = model_dict[args.model].Model(args).float().to(self.device)
        self.data_provider = data_provider

    def _get_data(self, flag):
        return self.data_provider(self.args, flag)

    def _forward(self, batch_x, batch_y, batch_x_mark, batch_y_mark):
        dec_inp = torch.zeros_like(batch_y[:, -self.args.pred_len:, :]).float()
        dec_inp = torch.cat([batch_y[:, :self.args.label_len, :], dec_inp], dim=1).float().to(self.device)
        if self.args.use_amp:
            with torch.cuda.amp.autocast():
                outputs = self.model(batch_x, batch_x_mark, dec_inp, batch_y_mark)
        else:
            outputs = self.model(batch_x, batch_x_mark, dec_inp, batch_y_mark)
        if self.args.output_attention:
            outputs = outputs[0]
        return outputs

    def test(self, setting):
        test_data, test_loader = self._get_data(flag='test')
        preds = []
        trues = []
        self.model.eval()
        with torch.no_grad():
            for i, (batch_x, batch_y, batch_x_mark, batch_y_mark) in enumerate(test_loader):
                batch_x = batch_x.float().to(self.device)
                batch_y = batch_y.float().to(self.device)
                if 'PEMS' in self.args.data or 'Solar' in self.args.data:
                    batch_x_mark = None
                    batch_y_mark = None
                else:
                    batch_x_mark = batch_x_mark.float().to(self.device)
                    batch_y_mark = batch_y_mark.float().to(self.device)
                outputs = self._forward(batch_x, batch_y, batch_x_mark, batch_y_mark)
                f_dim = -1 if self.args.features == 'MS' else 0
                outputs = outputs[:, -self.args.pred_len:, f_dim:]
                batch_y = batch_y[:, -self.args.pred_len:, f_dim:].to(self.device)
                pred = outputs
                true = batch_y
                preds.append(pred)  # expect: TML004
                trues.append(true)  # expect: TML004
        preds = torch.cat(preds, dim=0).cpu().numpy()
        trues = torch.cat(trues, dim=0).cpu().numpy()
        if test_data.scale and self.args.inverse:
            shape = preds.shape
            preds = test_data.inverse_transform(preds.reshape(-1, shape[-1])).reshape(shape)
            trues = test_data.inverse_transform(trues.reshape(-1, shape[-1])).reshape(shape)
        print('test shape:', preds.shape, trues.shape)
        folder_path = './results/' + setting + '/'
        os.makedirs(folder_path, exist_ok=True)
        mae, mse, rmse, mape, mspe = metric(preds, trues)
        print('mse:{}, mae:{}'.format(mse, mae))
        np.save(folder_path + 'metrics.npy', np.array([mae, mse, rmse, mape, mspe]))
        np.save(folder_path + 'pred.npy', preds)
        np.save(folder_path + 'true.npy', trues)
        return mse, mae
