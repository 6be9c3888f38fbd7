# Source: https://github.com/princeton-vl/RAFT/blob/master/train.py
# Report: RAFT optical-flow trainer with the one-edit mistake: the epe entry of the metrics dict is left as a tensor (no .item()) before Logger sums it
# Shape: metrics["epe"] is graph-attached (epe comes from flow_preds[-1], its branch is not part of flow_loss so backward never frees it); Logger.push does self.running_loss[key] += value, chaining 100 steps of epe graphs and full-res flow residuals
# Expect: TML001 line 86
import numpy as np
import torch
from torch import nn, optim

MAX_FLOW = 400
SUM_FREQ = 100


def sequence_loss(flow_preds, flow_gt, valid, gamma=0.8, max_flow=MAX_FLOW):
    n_predictions = len(flow_preds)
    flow_loss = 0.0
    mag = torch.sum(flow_gt ** 2, dim=1).sqrt()
    valid = (valid >= 0.5) & (mag < max_flow)
    for i in range(n_predictions):
        i_weight = gamma ** (n_predictions - i - 1)
        i_loss = (flow_preds[i] - flow_gt).abs()
        flow_loss += i_weight * (valid[:, None] * i_loss).mean()

    epe = torch.sum((flow_preds[-1] - flow_gt) ** 2, dim=1).sqrt()
    epe = epe.view(-1)[valid.view(-1)]
    metrics = {
        "epe": epe.mean(),
        "1px": (epe < 1).float().mean().item(),
        "3px": (epe < 3).float().mean().item(),
        "5px": (epe < 5).float().mean().item(),
    }
    return flow_loss, metrics


class Logger:
    def __init__(self, scheduler):
        self.scheduler = scheduler
        self.total_steps = 0
        self.running_loss = {}

    def _print_status(self):
        vals = [self.running_loss[k] / SUM_FREQ for k in sorted(self.running_loss)]
        lr = self.scheduler.get_last_lr()[0]
        print("[{:6d}, {:10.7f}] ".format(self.total_steps + 1, lr)
              + ("{:10.4f}, " * len(vals)).format(*vals))

    def push(self, metrics):
        self.total_steps += 1
        for key in metrics:
            if key not in self.running_loss:
                self.running_loss[key] = 0.0
            self.running_loss[key] += metrics[key]
        if self.total_steps % SUM_FREQ == SUM_FREQ - 1:
            self._print_status()
            self.running_loss = {}


def train(args, model: nn.Module, train_loader):
    model.cuda()
    model.train()
    optimizer = optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.wdecay)
    scheduler = optim.lr_scheduler.OneCycleLR(optimizer, args.lr, args.num_steps + 100,
                                              pct_start=0.05, cycle_momentum=False)
    scaler = torch.cuda.amp.GradScaler(enabled=args.mixed_precision)
    logger = Logger(scheduler)

    total_steps = 0
    keep_training = True
    while keep_training:
        for data_blob in train_loader:
            optimizer.zero_grad()
            image1, image2, flow, valid = [x.cuda() for x in data_blob]
            if args.add_noise:
                stdv = np.random.uniform(0.0, 5.0)
                image1 = (image1 + stdv * torch.randn(*image1.shape).cuda()).clamp(0.0, 255.0)
                image2 = (image2 + stdv * torch.randn(*image2.shape).cuda()).clamp(0.0, 255.0)

            flow_predictions = model(image1, image2, iters=args.iters)
            loss, metrics = sequence_loss(flow_predictions, flow, valid, args.gamma)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            scaler.step(optimizer)
            scheduler.step()
            scaler.update()

            logger.push(metrics)  # expect: TML001

            total_steps += 1
            if total_steps > args.num_steps:
                keep_training = False
                break
    return model
