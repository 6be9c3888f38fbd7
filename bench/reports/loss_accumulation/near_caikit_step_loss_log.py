# Source: https://github.com/caikit/caikit-nlp/pull/258
# Report: caikit-nlp prompt-tuning loop kept each step's `outputs.loss` tensor in a per-epoch dict for training metadata ("can potentially cause memory issues"); fixed by storing `loss.detach().float().item()`
# Shape: the merged fix: the `outputs.loss` value is turned into a Python float once and that float goes into both the running total and the per-step dict
# Expect: near-miss: must be silent
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
                    loss_float = loss.detach().float().item()
                    total_loss += loss_float
                    accelerator.backward(loss)
                    optimizer.step()
                    lr_scheduler.step()
                    optimizer.zero_grad()
                    step_loss_log[step_count] = loss_float
                    step_count += 1
            except torch.cuda.OutOfMemoryError:
                raise MemoryError("Not enough memory available for training!")

        log.info("epoch done", {"loss": loss_float, "epoch": epoch})

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
