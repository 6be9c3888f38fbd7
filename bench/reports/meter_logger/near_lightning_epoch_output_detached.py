# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/4556
# Report: With self.log(..., on_epoch=True) the training loop appended every batch_output (which still held the training loss on the GPU) to an epoch_output list, so GPU memory grew until the epoch ended.
# Shape: the step output is rebuilt from the loss as a Python float before it goes into the epoch list, so only numbers are kept.
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


def training_step(model, batch):
    x, y = batch
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    return {"loss": loss, "n": y.numel()}


def on_epoch_end(epoch_output):
    total = sum(out["loss"] * out["n"] for out in epoch_output)
    count = sum(out["n"] for out in epoch_output)
    return total / max(count, 1)


def run_epoch(model, loader, optimizer, device="cuda"):
    model.train()
    epoch_output = []
    for batch in loader:
        batch = [t.to(device) for t in batch]
        batch_output = training_step(model, batch)
        optimizer.zero_grad()
        batch_output["loss"].backward()
        optimizer.step()
        kept = {"loss": batch_output["loss"].item(), "n": batch_output["n"]}
        epoch_output.append(kept)
    return on_epoch_end(epoch_output)
