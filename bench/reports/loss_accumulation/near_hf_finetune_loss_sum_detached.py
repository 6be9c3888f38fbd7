# Source: https://github.com/ray-project/ray/pull/40940
# Report: the merged fix stops the running total from holding each step's graph (the reviewers weighed `.item()` against `.detach()`).
# Shape: same accelerator loop and epoch total read from `outputs.loss`, folded in detached so the total stays a plain device scalar without history.
# Expect: near-miss: must be silent
import time

import torch


def train_one_epoch(model, accelerator, optimizer, scheduler, train_loader, epoch, log):
    model.train()
    loss_sum = torch.zeros((), device=accelerator.device)
    started = time.time()
    for step, batch in enumerate(train_loader):
        with accelerator.accumulate(model):
            outputs = model(**batch)
            loss = outputs.loss
            accelerator.backward(loss)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
        loss_sum += loss.detach()
    mean_loss = (loss_sum / (step + 1)).item()
    log({"epoch": epoch, "train_loss": mean_loss, "seconds": time.time() - started})
    return mean_loss
