# Source: https://github.com/meituan/YOLOv6/blob/main/yolov6/core/engine.py
# Report: YOLOv6 Trainer (issue #486 reports GPU memory creeping up during its training) keeps the loss parts returned by ComputeLoss on self and folds them into self.mean_loss every step; the repository detaches them inside ComputeLoss
# Shape: ComputeLoss.__call__ returns torch.cat(parts).detach(), so self.loss_items and the running self.mean_loss are plain device tensors with no history; only total_loss is back-propagated
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda import amp
from tqdm import tqdm


class ComputeLoss:
    """Detection loss: returns the total to back-propagate and a 3-vector of parts for the progress bar."""

    def __init__(self, loss_weight=None):
        self.loss_weight = loss_weight or {'class': 1.0, 'iou': 2.5, 'dfl': 0.5}

    def __call__(self, outputs, targets):
        pred_scores, pred_boxes, pred_dist = outputs
        loss_cls = F.binary_cross_entropy_with_logits(pred_scores, targets['scores'], reduction='sum')
        loss_cls = loss_cls / targets['scores'].sum().clamp(min=1)
        loss_iou = (1.0 - F.cosine_similarity(pred_boxes, targets['boxes'], dim=-1)).mean()
        loss_dfl = F.smooth_l1_loss(pred_dist, targets['dist'])
        loss = self.loss_weight['class'] * loss_cls + self.loss_weight['iou'] * loss_iou + \
            self.loss_weight['dfl'] * loss_dfl
        return loss, \
            torch.cat(((self.loss_weight['iou'] * loss_iou).unsqueeze(0),
                       (self.loss_weight['dfl'] * loss_dfl).unsqueeze(0),
                       (self.loss_weight['class'] * loss_cls).unsqueeze(0))).detach()


class Trainer:
    def __init__(self, args, model, optimizer, scheduler, train_loader, device):
        self.args = args
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.train_loader = train_loader
        self.device = device
        self.max_epoch = args.epochs
        self.max_stepnum = len(train_loader)
        self.batch_size = args.batch_size

    def train(self):
        self.scaler = amp.GradScaler(enabled=self.device != 'cpu')
        self.compute_loss = ComputeLoss()
        self.last_opt_step = -1
        for self.epoch in range(self.max_epoch):
            self.train_in_loop()

    def train_in_loop(self):
        self.prepare_for_steps()
        for self.step, self.batch_data in self.pbar:
            self.train_in_steps()
            self.print_details()

    def train_in_steps(self):
        images = self.batch_data[0].to(self.device, non_blocking=True).float() / 255
        targets = {k: v.to(self.device) for k, v in self.batch_data[1].items()}
        with amp.autocast(enabled=self.device != 'cpu'):
            preds = self.model(images)
            total_loss, loss_items = self.compute_loss(preds, targets)
        self.scaler.scale(total_loss).backward()
        self.loss_items = loss_items
        self.update_optimizer()

    def prepare_for_steps(self):
        if self.epoch > 0:
            self.scheduler.step()
        self.model.train()
        self.mean_loss = torch.zeros(3, device=self.device)
        self.optimizer.zero_grad()
        self.pbar = tqdm(enumerate(self.train_loader), total=self.max_stepnum)

    def print_details(self):
        self.mean_loss = (self.mean_loss * self.step + self.loss_items) / (self.step + 1)
        self.pbar.set_description(('%10s' + '%10.4g' * 3) % (f'{self.epoch}/{self.max_epoch - 1}', *self.mean_loss))

    def update_optimizer(self):
        curr_step = self.step + self.max_stepnum * self.epoch
        accumulate = max(1, round(64 / self.batch_size))
        if curr_step - self.last_opt_step >= accumulate:
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad()
            self.last_opt_step = curr_step
