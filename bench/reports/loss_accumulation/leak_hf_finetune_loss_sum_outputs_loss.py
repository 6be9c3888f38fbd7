# Source: https://github.com/ray-project/ray/pull/40940
# Report: the LLM fine-tuning template summed `outputs.loss` into a running total for its progress log, keeping every step's graph alive until the epoch ended; memory grew every iteration.
# Shape: the loss is read as an attribute of the model output inside an accelerator-driven loop and folded into an epoch total that is only logged at the end.
# Expect: TML001 line 22
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
        loss_sum += loss  # expect: TML001
    mean_loss = (loss_sum / (step + 1)).item()
    log({"epoch": epoch, "train_loss": mean_loss, "seconds": time.time() - started})
    return mean_loss
