# Source: https://github.com/Z-Zheng/SimpleCV/blob/2326104b90a575ed45608d3a0972e16a42491b13/simplecv/util/checkpoint.py
# Report: SimpleCV's DDP Launcher resumes every rank from the last checkpoint through CheckPoint.load(), which called torch.load without map_location (fixed in PR #30 "configure map_location for resuming checkpoint when ddp training")
# Shape: fixed as in PR #30: try_resume() passes a map_location that keeps the storages on the CPU, and load_state_dict copies them onto each rank's own device
# Expect: near-miss: must be silent
import json
import os
from collections import OrderedDict

import torch
import torch.distributed as dist


def get_rank():
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


class CheckPoint(object):
    MODEL = 'model'
    OPTIMIZER = 'opt'
    GLOBALSTEP = 'global_step'
    LAST = 'last'
    INFO_NAME = 'checkpoint_info.json'

    def __init__(self, launcher=None):
        self._launcher = launcher
        self._global_step = 0
        self._json_log = {CheckPoint.LAST: dict(step=0, name='')}

    @property
    def global_step(self):
        return self._global_step

    def set_global_step(self, value):
        self._global_step = value

    def step(self):
        self._global_step += 1

    def save(self):
        ckpt = OrderedDict({
            CheckPoint.MODEL: self._launcher.model.state_dict(),
            CheckPoint.OPTIMIZER: self._launcher.optimizer.state_dict(),
            CheckPoint.GLOBALSTEP: self.global_step,
        })
        filename = 'model-{}.pth'.format(self.global_step)
        torch.save(ckpt, os.path.join(self._launcher.model_dir, filename))
        self._json_log[CheckPoint.LAST] = dict(step=self.global_step, name=filename)
        with open(os.path.join(self._launcher.model_dir, CheckPoint.INFO_NAME), 'w') as f:
            json.dump(self._json_log, f)

    @staticmethod
    def load_checkpoint_info(model_dir):
        path = os.path.join(model_dir, CheckPoint.INFO_NAME)
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return json.load(f)

    @staticmethod
    def load(filepath, map_location=None):
        ckpt = torch.load(filepath, map_location=map_location)
        return ckpt

    def try_resume(self):
        if self._launcher is None:
            return
        model_dir = self._launcher.model_dir
        info = self.load_checkpoint_info(model_dir)
        if info is None:
            return
        last_path = os.path.join(model_dir, info[CheckPoint.LAST]['name'])
        ckpt = self.load(last_path, map_location=lambda storage, loc: storage)
        self._launcher.model.load_state_dict(ckpt[CheckPoint.MODEL])
        self._launcher.optimizer.load_state_dict(ckpt[CheckPoint.OPTIMIZER])
        self.set_global_step(ckpt[CheckPoint.GLOBALSTEP])


def reduce_loss_dict(loss_dict):
    world_size = dist.get_world_size() if dist.is_initialized() else 1
    if world_size < 2:
        return loss_dict
    names = sorted(loss_dict.keys())
    values = torch.stack([loss_dict[k] for k in names], dim=0)
    dist.reduce(values, dst=0)
    if dist.get_rank() == 0:
        values /= world_size
    return {k: v for k, v in zip(names, values)}


def load_model_state_dict_from_ckpt(filepath):
    ckpt = torch.load(filepath, map_location='cpu')
    return {k.replace('module.', ''): v for k, v in ckpt[CheckPoint.MODEL].items()}


class Launcher(object):
    def __init__(self, model_dir, model, optimizer):
        self.model_dir = model_dir
        self.model = model
        self.optimizer = optimizer
        self._master = get_rank() == 0
        self._device = torch.device('cuda', torch.cuda.current_device())
        self._ckpt = CheckPoint(self)

    def compute_loss_gradient(self, data):
        loss_dict = {'total_loss': 0.0}
        images, targets = [t.to(self._device) for t in data]
        msg_dict = self.model(images, targets)
        losses = {k: v for k, v in msg_dict.items() if k.endswith('loss')}
        total_loss = sum(losses.values())
        total_loss.backward()
        with torch.no_grad():
            losses = reduce_loss_dict(losses)
            for name, value in losses.items():
                loss_dict[name] = loss_dict.get(name, 0.0) + value.item()
                loss_dict['total_loss'] += value.item()
        return loss_dict

    def train_iters(self, train_loader, num_iters, log_fn):
        self._ckpt.try_resume()
        self.model.train()
        while self._ckpt.global_step < num_iters:
            for data in train_loader:
                loss_dict = self.compute_loss_gradient(data)
                self.optimizer.step()
                self.optimizer.zero_grad()
                self._ckpt.step()
                if self._master:
                    log_fn(self._ckpt.global_step, loss_dict)
            if self._master:
                self._ckpt.save()
