# Source: https://github.com/mir-group/nequip/pull/1
# Report: nequip trainer kept the undetached batch loss (and loss/MAE contribution dicts) for logging; PR "Detach all losses that get saved" detached them and ran the stats code under no_grad
# Shape: variant of the fix: the batch loss is reduced to a Python float (and the contributions detached) inside no_grad before end_of_batch_log stores it in the trainer statistics
# Expect: near-miss: must be silent
import logging

import torch

LOSS_KEY = "loss"
VALUE_KEY = "value"
CONTRIB = "contrib"


class Trainer:
    def __init__(self, model, loss, optim, dl_train, dl_val, device):
        self.model = model
        self.loss = loss
        self.optim = optim
        self.dl_train = dl_train
        self.dl_val = dl_val
        self.device = device
        self.statistics = {}
        self.ibatch = 0
        self.logger = logging.getLogger("trainer")

    def batch_step(self, data, validation=False):
        self.model.train()
        data = data.to(self.device)
        out = self.model(data)
        loss, loss_contrib = self.loss(pred=out, ref=data)
        if not validation:
            self.optim.zero_grad()
            loss.backward()
            self.optim.step()
        with torch.no_grad():
            self.batch_loss = loss.item()
            self.batch_loss_contrib = {k: v.detach() for k, v in loss_contrib.items()}
            self.end_of_batch_log(validation)

    def end_of_batch_log(self, validation: bool):
        category = "validation" if validation else "training"
        if self.ibatch == 0:
            stat = {LOSS_KEY: {VALUE_KEY: [], CONTRIB: {}}}
            for key in self.batch_loss_contrib:
                stat[LOSS_KEY][CONTRIB][key] = []
            self.statistics[category] = stat
        else:
            stat = self.statistics[category]

        value = self.batch_loss
        stat[LOSS_KEY][VALUE_KEY] += [value]
        log_str = f"  {self.ibatch + 1:5d} {value:16.3f}"
        for key, contrib in self.batch_loss_contrib.items():
            item = contrib.item()
            stat[LOSS_KEY][CONTRIB][key] += [item]
            log_str += f" {item:16.3f}"
        self.logger.info(log_str)

    def epoch_step(self):
        for self.ibatch, batch in enumerate(self.dl_train):
            self.batch_step(data=batch, validation=False)
        for self.ibatch, batch in enumerate(self.dl_val):
            self.batch_step(data=batch, validation=True)
        for category, stat in self.statistics.items():
            values = [float(v) for v in stat[LOSS_KEY][VALUE_KEY]]
            self.logger.info(f"{category} mean loss {torch.tensor(values).mean():8.3f}")
