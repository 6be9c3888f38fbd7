# Source: https://github.com/ray-project/ray/pull/40940
# Report: the merged fix stops the running total from holding each step's graph (the reviewers weighed `.item()` against `.detach()`).
# Shape: same timed loop and device total read from `outputs.loss`, folded in detached so the total stays a plain device scalar without history.
# Expect: near-miss: must be silent
import time

import torch


def training_function(model, accelerator, optimizer, scheduler, train_loader, epoch, report_every=10):
    model.train()
    loss_sum = torch.zeros((), device=accelerator.device)
    fwd_seconds = bwd_seconds = 0.0
    for step, batch in enumerate(train_loader):
        started = time.time()
        outputs = model(**batch)
        loss_sum += outputs.loss.detach()
        fwd_seconds += time.time() - started
        started = time.time()
        accelerator.backward(outputs.loss)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        bwd_seconds += time.time() - started
        if accelerator.is_main_process and step % report_every == 0:
            accelerator.print(f"epoch {epoch} step {step} fwd {fwd_seconds:.1f}s bwd {bwd_seconds:.1f}s")
    return (loss_sum / (step + 1)).item()
