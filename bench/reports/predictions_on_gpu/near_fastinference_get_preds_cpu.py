# Source: https://github.com/muellerzr/fastinference/issues/7
# Report: get_preds stored every input batch on the GPU (regardless of fully_decoded) until the inference loop ended, so large test sets (<50,000 images) ran out of CUDA memory; proposed fixes were storing inputs with .cpu() or skipping them when fully_decoded is False.
# Shape: fixed variant combining both proposals: inputs are only collected when fully_decoded is set and are moved to the CPU first, and raw outputs are appended as `.cpu()` copies under torch.no_grad().
# Expect: near-miss: must be silent
import torch


def _to_cpu(x):
    if isinstance(x, (list, tuple)):
        return type(x)(_to_cpu(t) for t in x)
    return x.cpu()


def get_preds(learn, dl, fully_decoded=False, with_loss=False):
    model = learn.model.eval()
    n_inp = dl.n_inp
    is_multi = n_inp > 1
    inps = [[] for _ in range(n_inp)] if is_multi else []
    outs, losses = [], []
    with torch.no_grad():
        for batch in dl:
            xb, yb = batch[:n_inp], batch[n_inp:]
            if fully_decoded:
                if is_multi:
                    for i in range(n_inp):
                        inps[i].append(batch[i].cpu())
                else:
                    inps.append(_to_cpu(batch[:n_inp]))
            out = model(*xb)
            if with_loss and len(yb):
                losses.append(learn.loss_func(out, *yb, reduction="none").cpu())
            outs.append(out.cpu())
    outs = torch.cat(outs)
    if with_loss:
        losses = torch.cat(losses)
    if not fully_decoded:
        return outs, losses
    return inps, outs, losses
