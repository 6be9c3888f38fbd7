# Source: https://github.com/caikit/caikit-nlp/pull/258
# Report: caikit-nlp prompt-tuning loop kept each step's `outputs.loss` tensor in a per-epoch dict for training metadata ("can potentially cause memory issues"); fixed by storing `loss.detach().float().item()`
# Shape: HF-style `outputs.loss` stored by step index into a dict created before the batch loop, read back as floats only after the epoch; a detached running total sits beside it
# Expect: TML001 line 36
from datetime import datetime

import torch
from tqdm import tqdm


def train_prompt_tuning(
    model, optimizer, lr_scheduler, accelerator, train_dataloader, num_epochs, log, silence_progress_bars=False
):
    model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, lr_scheduler
    )
    training_loss_tracker = []
    step_count = 1

    for epoch in range(num_epochs):
        step_loss_log = {}
        model.train()
        total_loss = 0
        tqdm_loader = tqdm(train_dataloader, disable=silence_progress_bars)
        for batch in tqdm_loader:
            tqdm_loader.set_description("Epoch: {}".format(epoch))
            try:
                with accelerator.accumulate(model):
                    outputs = model(**batch)
                    loss = outputs.loss
                    total_loss += loss.detach().float()
                    accelerator.backward(loss)
                    optimizer.step()
                    lr_scheduler.step()
                    optimizer.zero_grad()
                    step_loss_log[step_count] = loss  # expect: TML001
                    step_count += 1
            except torch.cuda.OutOfMemoryError:
                raise MemoryError("Not enough memory available for training!")

        log.info("epoch done", {"loss": float(loss), "epoch": epoch})

        for step, loss_val in step_loss_log.items():
            # propagated and stored as training metadata
            training_loss_tracker.append(
                {
                    "epoch": epoch,
                    "step": step,
                    "value": float(loss_val),
                    "timestamp": datetime.isoformat(datetime.now()),
                }
            )

    return {"loss": training_loss_tracker}
