# Source: https://github.com/ARISE-Initiative/robomimic/blob/08c7477f4e51c2f8343e1743e557cd7543f527e5/robomimic/algo/bc.py
# Report: robomimic's BC.train_on_batch puts TensorUtils.detach(losses) into the info dict and BC.log_info reads each loss with .item(); run_epoch appends every step's log dict to step_log_all and averages it at the end of the epoch (run_epoch in robomimic/utils/train_utils.py)
# Shape: safeguard removed: train_on_batch stores the live loss dict and log_info returns the loss tensors themselves, so step_log_all (a per-epoch logger list) pins every step's behaviour-cloning graph until np.mean at epoch end
# Expect: TML001 line 91
import time
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn


class BC(nn.Module):
    def __init__(self, policy, algo_config, device):
        super().__init__()
        self.nets = nn.ModuleDict({"policy": policy}).float().to(device)
        self.algo_config = algo_config
        self.device = device
        self.optimizers = {"policy": torch.optim.Adam(self.nets["policy"].parameters(), lr=1e-4)}

    def process_batch_for_training(self, batch):
        input_batch = dict()
        input_batch["obs"] = {k: batch["obs"][k][:, 0, :].to(self.device).float() for k in batch["obs"]}
        input_batch["goal_obs"] = batch.get("goal_obs", None)
        input_batch["actions"] = batch["actions"][:, 0, :].to(self.device).float()
        return input_batch

    def _forward_training(self, batch):
        predictions = OrderedDict()
        predictions["actions"] = self.nets["policy"](obs_dict=batch["obs"], goal_dict=batch["goal_obs"])
        return predictions

    def _compute_losses(self, predictions, batch):
        losses = OrderedDict()
        a_target = batch["actions"]
        actions = predictions["actions"]
        losses["l2_loss"] = nn.MSELoss()(actions, a_target)
        losses["l1_loss"] = nn.SmoothL1Loss()(actions, a_target)
        losses["action_loss"] = (
            self.algo_config.loss.l2_weight * losses["l2_loss"]
            + self.algo_config.loss.l1_weight * losses["l1_loss"]
        )
        return losses

    def _train_step(self, losses):
        self.optimizers["policy"].zero_grad()
        losses["action_loss"].backward()
        self.optimizers["policy"].step()
        return OrderedDict()

    def train_on_batch(self, batch, epoch, validate=False):
        with torch.set_grad_enabled(not validate):
            info = OrderedDict()
            predictions = self._forward_training(batch)
            losses = self._compute_losses(predictions, batch)
            info["predictions"] = predictions
            info["losses"] = losses
            if not validate:
                info.update(self._train_step(losses))
        return info

    def log_info(self, info):
        log = OrderedDict()
        log["Loss"] = info["losses"]["action_loss"]
        log["L2_Loss"] = info["losses"]["l2_loss"]
        log["L1_Loss"] = info["losses"]["l1_loss"]
        return log


def run_epoch(model, data_loader, epoch, validate=False, num_steps=None):
    epoch_timestamp = time.time()
    if validate:
        model.eval()
    else:
        model.train()
    if num_steps is None:
        num_steps = len(data_loader)
    step_log_all = []
    timing_stats = dict(Data_Loading=[], Process_Batch=[], Train_Batch=[], Log_Info=[])
    data_loader_iter = iter(data_loader)
    for _ in range(num_steps):
        t = time.time()
        batch = next(data_loader_iter)
        timing_stats["Data_Loading"].append(time.time() - t)
        input_batch = model.process_batch_for_training(batch)
        t = time.time()
        info = model.train_on_batch(input_batch, epoch, validate=validate)
        timing_stats["Train_Batch"].append(time.time() - t)
        t = time.time()
        step_log = model.log_info(info)
        step_log_all.append(step_log)  # expect: TML001
        timing_stats["Log_Info"].append(time.time() - t)

    step_log_dict = {}
    for i in range(len(step_log_all)):
        for k in step_log_all[i]:
            step_log_dict.setdefault(k, []).append(step_log_all[i][k])
    step_log_all = dict((k, float(np.mean([float(x) for x in v]))) for k, v in step_log_dict.items())
    for k in timing_stats:
        step_log_all["Time_{}".format(k)] = np.sum(timing_stats[k]) / 60.0
    step_log_all["Time_Epoch"] = (time.time() - epoch_timestamp) / 60.0
    return step_log_all
