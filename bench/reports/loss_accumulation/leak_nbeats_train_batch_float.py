# Source: https://github.com/ygrepo/DS-GA-3001-001-Project/blob/master/ts/n_beats/trainer.py
# Report: N-BEATS Trainer: variant where train_batch() returns the loss tensor instead of float(loss), and train() sums it into epoch_loss
# Shape: the graph-attached loss travels out of the helper by return and is added to epoch_loss, bound before the batch loop: each batch's loss node stays alive for the whole epoch (and epoch_loss is later compared/saved as a tensor)
# Expect: TML001 line 56
import time

import numpy as np
import torch
import torch.nn as nn


class ScalarLog:
    def __init__(self):
        self.rows = []

    def log_scalar(self, tag, value, step):
        self.rows.append((tag, value, step))


class NBeatsTrainer:
    def __init__(self, model, loader, config, backcast_length, forecast_length):
        self.model = model.to(config["device"])
        self.loader = loader
        self.config = config
        self.backcast_length = backcast_length
        self.forecast_length = forecast_length
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=config["learning_rate"])
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=config["lr_anneal_step"],
                                                         gamma=config["lr_anneal_rate"])
        self.criterion = nn.SmoothL1Loss()
        self.log = ScalarLog()
        self.epochs = 0

    def train_batch(self, series):
        self.optimizer.zero_grad()
        inputs, targets = [], []
        for j in range(self.backcast_length, series.shape[1] - self.forecast_length):
            inputs.append(series[:, j - self.backcast_length:j])
            targets.append(series[:, j:j + self.forecast_length])
        window_input = torch.stack(inputs, dim=0)
        window_output = torch.stack(targets, dim=0)
        backcast, forecast = self.model(window_input)
        loss = self.criterion(forecast, window_output)
        loss.backward()
        nn.utils.clip_grad_value_(self.model.parameters(), self.config["gradient_clipping"])
        self.optimizer.step()
        self.scheduler.step()
        return loss

    def train(self):
        self.model.train()
        epoch_loss = 0
        for batch_num, (train, val, test, info_cat, idx) in enumerate(self.loader):
            start = time.time()
            loss = self.train_batch(train)
            epoch_loss += loss  # expect: TML001
            self.log.log_scalar("iteration_time", time.time() - start, batch_num + 1)
        epoch_loss = epoch_loss / (batch_num + 1)
        self.log.log_scalar("loss", epoch_loss, self.epochs + 1)
        return epoch_loss

    def val(self, testing=False):
        self.model.eval()
        with torch.no_grad():
            acts, preds = [], []
            hold_out_loss = 0
            for batch_num, (train, val, test, info_cat, idx) in enumerate(self.loader):
                target = test if testing else val
                if testing:
                    train = torch.cat((train, val), dim=1)
                ts_len = train.shape[1]
                window = train[:, ts_len - self.backcast_length:ts_len][np.newaxis, ...]
                backcast, forecast = self.model(window)
                hold_out_loss += self.criterion(forecast, target[np.newaxis, ...])
                acts.extend(target.view(-1).cpu().numpy())
                preds.extend(forecast.view(-1).cpu().numpy())
            hold_out_loss = hold_out_loss / (batch_num + 1)
        self.model.train()
        return hold_out_loss.item(), np.asarray(acts), np.asarray(preds)

    def fit(self, max_epochs):
        best = 1e8
        for e in range(max_epochs):
            epoch_loss = self.train()
            val_loss, _, _ = self.val(testing=True)
            if epoch_loss < best:
                best = epoch_loss
                torch.save(self.model.state_dict(), "nbeats.pt")
            print(f"epoch {e}: train {epoch_loss:.4f} holdout {val_loss:.4f}")
            self.epochs += 1
