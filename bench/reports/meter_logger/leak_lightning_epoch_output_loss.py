# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/4556
# Report: With self.log(..., on_epoch=True) the training loop appended every batch_output (which still held the training loss on the GPU) to an epoch_output list, so GPU memory grew until the epoch ended.
# Shape: a hand-written epoch loop keeps each step's output dict, including the un-detached loss, in a list that is only reduced at epoch end.
# Expect: TML001 line 31
import torch
import torch.nn.functional as F


def training_step(model, batch):
    x, y = batch
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    return {"loss": loss, "n": y.numel()}


def on_epoch_end(epoch_output):
    total = sum(out["loss"].item() * out["n"] for out in epoch_output)
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
        epoch_output.append(batch_output)  # expect: TML001
    return on_epoch_end(epoch_output)
