# Source: https://github.com/ray-project/ray/pull/40940
# Report: the LLM fine-tuning template summed `outputs.loss` into a running total for its progress log, keeping every step's graph alive until the epoch ended; memory grew every iteration.
# Shape: the loss is read straight off the model output (`outputs.loss`) and folded into an epoch total on the device, returned as a float at the end; the loop times forward and backward per step.
# Expect: TML001 line 17
import time

import torch


def training_function(model, accelerator, optimizer, scheduler, train_loader, epoch, report_every=10):
    model.train()
    loss_sum = torch.zeros((), device=accelerator.device)
    fwd_seconds = bwd_seconds = 0.0
    for step, batch in enumerate(train_loader):
        started = time.time()
        outputs = model(**batch)
        loss_sum += outputs.loss  # expect: TML001
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
