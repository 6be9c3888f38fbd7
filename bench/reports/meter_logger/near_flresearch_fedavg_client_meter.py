# Source: https://github.com/luckSimers/FL-research/blob/7dea42a13437e869093e91fccba887f1090fea4a/algorithms/fedavg.py
# Report: audited correct idiom: the FedAvg client's local loop feeds loss.item() to an AverageMeter whose update() does self.sum += val * n (AverageMeter in utils/tools.py at the same commit)
# Shape: FedAvg Client.train with the AverageMeter kept in this module, as in the original: the meter receives loss.item(), a Python float, so self.sum holds no tensor
# Expect: near-miss: must be silent
import time
import logging

import torch
import torch.nn as nn
from torch.nn.utils.clip_grad import clip_grad_norm_
from torch.utils.data import DataLoader


class AverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.max = -float("inf")
        self.min = float("inf")
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count
        self.max = val if val > self.max else self.max
        self.min = val if val < self.min else self.min


class ClientBase(object):
    def __init__(self, args, id, trainset):
        self.id = id
        self.device = torch.device("cuda:0")
        self.local_steps = args.local_steps
        self.loader = DataLoader(trainset, batch_size=args.batch_size, shuffle=True)
        self.model = None
        self.optimizer = None

    def prepare(self, lr, state_dict):
        self.model.load_state_dict(state_dict)
        self.model.to(self.device)
        for group in self.optimizer.param_groups:
            group["lr"] = lr


class Client(ClientBase):
    def __init__(self, args, id, trainset) -> None:
        super(Client, self).__init__(args, id, trainset)
        self.clip_grad = args.clip_grad
        self.loss = nn.CrossEntropyLoss()

    def train(self, round_idx, lr, state_dict):
        st = time.time()
        self.prepare(lr, state_dict)
        self.model.train(True)
        loss_meter = AverageMeter()
        for step in range(self.local_steps):
            for x, y in self.loader:
                x, y = x.to(self.device), y.to(self.device)
                if len(y) < 2:
                    continue
                logits = self.model(x)
                loss = self.loss(logits, y)
                self.optimizer.zero_grad()
                loss.backward()
                clip_grad_norm_(self.model.parameters(), self.clip_grad)
                self.optimizer.step()
                loss_meter.update(loss.item(), y.size(0))
        logging.info(
            f"C{self.id:<2d}>> avg loss {loss_meter.avg:.2f}, "
            f"training cost {(time.time() - st) / 60:.2f} min"
        )
        self.model.to("cpu")
