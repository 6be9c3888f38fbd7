# Source: https://github.com/thuml/AutoTimes/issues/21
# Report: memory leak in long-term forecasting on a large dataset: the epoch's training loss is accumulated as a tensor (loss_val += loss) instead of a scalar; the reporter's fix is loss_val += loss.item() on both the AMP and the fp32 branch (source also: code: https://github.com/thuml/AutoTimes/blob/583382230c3183dc84a1932c07fbd707befb0e48/exp/exp_long_term_forecasting.py)
# Shape: as in the repository: loss_val is a CUDA scalar made before the batch loop and every step adds the graph-attached MSE loss into it in place, on both branches, so each step's graph hangs off loss_val until the epoch ends
# Expect: TML001 line 68; TML001 line 73
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch import optim


class Exp_Long_Term_Forecast(object):
    def __init__(self, args, model, data_provider):
        self.args = args
        self.device = args.gpu
        self.model = model.to(self.device)
        self.data_provider = data_provider

    def _get_data(self, flag):
        return self.data_provider(self.args, flag)

    def _select_optimizer(self):
        p_list = [p for p in self.model.parameters() if p.requires_grad]
        return optim.Adam([{'params': p_list}], lr=self.args.learning_rate,
                          weight_decay=self.args.weight_decay)

    def vali(self, vali_loader, criterion):
        total_loss, total_count = [], []
        self.model.eval()
        with torch.no_grad():
            for batch_x, batch_y, batch_x_mark, batch_y_mark in vali_loader:
                batch_x = batch_x.float().to(self.device)
                batch_y = batch_y.float().to(self.device)
                batch_x_mark = batch_x_mark.float().to(self.device)
                batch_y_mark = batch_y_mark.float().to(self.device)
                outputs = self.model(batch_x, batch_x_mark, None, batch_y_mark)
                loss = criterion(outputs, batch_y).detach().cpu()
                total_loss.append(loss)
                total_count.append(batch_x.shape[0])
        self.model.train()
        return np.average(total_loss, weights=total_count)

    def train(self, setting):
        _, train_loader = self._get_data(flag='train')
        _, vali_loader = self._get_data(flag='val')
        model_optim = self._select_optimizer()
        criterion = nn.MSELoss()
        scaler = torch.cuda.amp.GradScaler() if self.args.use_amp else None

        for epoch in range(self.args.train_epochs):
            loss_val = torch.tensor(0., device="cuda")
            count = torch.tensor(0., device="cuda")
            self.model.train()
            epoch_time = time.time()
            for i, (batch_x, batch_y, batch_x_mark, batch_y_mark) in enumerate(train_loader):
                model_optim.zero_grad()
                batch_x = batch_x.float().to(self.device)
                batch_y = batch_y.float().to(self.device)
                batch_x_mark = batch_x_mark.float().to(self.device)
                batch_y_mark = batch_y_mark.float().to(self.device)
                if self.args.use_amp:
                    with torch.cuda.amp.autocast():
                        outputs = self.model(batch_x, batch_x_mark, None, batch_y_mark)
                        loss = criterion(outputs, batch_y)
                        loss_val += loss  # expect: TML001
                        count += 1
                else:
                    outputs = self.model(batch_x, batch_x_mark, None, batch_y_mark)
                    loss = criterion(outputs, batch_y)
                    loss_val += loss  # expect: TML001
                    count += 1
                if (i + 1) % 100 == 0:
                    print("\titers: {0}, epoch: {1} | loss: {2:.7f}".format(i + 1, epoch + 1, loss.item()))
                if self.args.use_amp:
                    scaler.scale(loss).backward()
                    scaler.step(model_optim)
                    scaler.update()
                else:
                    loss.backward()
                    model_optim.step()
            print("Epoch: {} cost time: {}".format(epoch + 1, time.time() - epoch_time))
            if self.args.use_multi_gpu:
                dist.all_reduce(loss_val, op=dist.ReduceOp.SUM)
                dist.all_reduce(count, op=dist.ReduceOp.SUM)
            train_loss = loss_val.item() / count.item()
            vali_loss = self.vali(vali_loader, criterion)
            print("Epoch: {} | Train Loss: {:.7f} Vali Loss: {:.7f}".format(epoch + 1, train_loss, vali_loss))
            torch.save(self.model.state_dict(), os.path.join(self.args.checkpoints, setting, 'checkpoint.pth'))
        return self.model
