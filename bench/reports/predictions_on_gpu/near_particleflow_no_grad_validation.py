# Source: https://github.com/jpata/particleflow/pull/290
# Report: particleflow needed torch.no_grad() around the model forward in its validation loop; without it, larger validation batch sizes ran out of memory.
# Shape: the validation pass keeps model.eval() and loss bookkeeping but runs the whole loop body under torch.no_grad(), accumulating floats.
# Expect: near-miss: must be silent
import torch


def validation_run(model, loss_fn, loader, device="cuda"):
    model.eval()
    epoch_loss = {"total": 0.0, "classification": 0.0, "regression": 0.0}
    n_batches = 0
    with torch.no_grad():
        for batch in loader:
            X = batch["X"].to(device)
            ytarget = {k: v.to(device) for k, v in batch["y"].items()}
            ypred = model(X)
            loss = loss_fn(ytarget, ypred)
            for name in epoch_loss:
                epoch_loss[name] += loss[name].item()
            n_batches += 1
    for name in epoch_loss:
        epoch_loss[name] /= max(n_batches, 1)
    return epoch_loss
