# Source: https://github.com/varun19299/rigl-reproducibility/blob/077d71165538835a9277970b386928a7c0e05d4b/main.py
# Report: audit of the sparse-training (RigL) train(): the repo feeds loss.item() into a SmoothenValue exponential-average collector; this is the variant it avoids, where the live loss goes into the collector and its EMA attribute chains every step's loss graph to the previous one
# Shape: a smoothing meter class whose add_value() rebinds self.mov_avg from its old value and the argument; train() updates it once per batch and returns .smooth; masking step or optimizer step per batch
# Expect: TML001 line 49
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm


class SmoothenValue:
    """Bias-corrected exponential moving average of a logged value."""

    def __init__(self, beta=0.9):
        self.beta, self.n, self.mov_avg, self.smooth = beta, 0, 0, 0

    def add_value(self, val):
        self.n += 1
        self.mov_avg = self.beta * self.mov_avg + (1 - self.beta) * val
        self.smooth = self.mov_avg / (1 - self.beta ** self.n)


class LabelSmoothingCE(nn.Module):
    def __init__(self, smoothing=0.0):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits, target):
        logp = F.log_softmax(logits, dim=-1)
        nll = -logp.gather(1, target.unsqueeze(1)).squeeze(1)
        return ((1 - self.smoothing) * nll - self.smoothing * logp.mean(dim=-1)).mean()


def train(model, mask, train_loader, optimizer, lr_scheduler, global_step, epoch, device,
          label_smoothing=0.0, log_interval=100, masking_interval=1, masking_end_when=-1):
    model.train()
    mask_updates = 0
    loss_collector = SmoothenValue()
    criterion = LabelSmoothingCE(label_smoothing)
    pbar = tqdm(total=len(train_loader), dynamic_ncols=True)
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = criterion(output, target)
        loss.backward()
        loss_collector.add_value(loss)  # expect: TML001
        if mask is not None and global_step < masking_end_when and (global_step + 1) % masking_interval == 0:
            mask.update_connections()
            mask_updates += 1
        else:
            (mask if mask is not None else optimizer).step()
        lr_scheduler.step()
        pbar.update(1)
        global_step += 1
        if batch_idx % log_interval == 0:
            pbar.set_description(f"Train Epoch {epoch} Iters {global_step} Mask Updates {mask_updates} "
                                 f"Train loss {loss_collector.smooth:.6f}")
    logging.info(f"Train Epoch {epoch} done, smoothed loss {loss_collector.smooth:.6f}")
    return loss_collector.smooth, global_step


def fit(model, mask, train_loader, optimizer, lr_scheduler, epochs, device):
    step = 0
    history = []
    for epoch in range(epochs):
        smoothed, step = train(model, mask, train_loader, optimizer, lr_scheduler, step, epoch + 1, device)
        history.append(float(smoothed))
    return history
