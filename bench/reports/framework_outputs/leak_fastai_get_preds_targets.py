# Source: https://github.com/fastai/fastai/issues/2337
# Report: fastai v1 Learner.get_preds OOMed on big validation sets: loss_batch returned yb[0].detach() (still on the GPU) and validate() kept every batch's targets until torch.cat at the end
# Shape: helper returns a (preds, targets) tuple in which only preds is moved to the CPU; the framework's validate loop appends each tuple to a list returned to get_preds
# Expect: TML004 line 34
import torch
from torch import nn


def to_detach(b, cpu: bool = True):
    if isinstance(b, (list, tuple)):
        return type(b)(to_detach(o, cpu) for o in b)
    return b.detach().cpu() if cpu else b.detach()


def loss_batch(model: nn.Module, xb, yb, loss_func=None, opt=None, cb_handler=None):
    if not isinstance(xb, (list, tuple)):
        xb = [xb]
    if not isinstance(yb, (list, tuple)):
        yb = [yb]
    out = model(*xb)
    out = cb_handler.on_loss_begin(out)
    if not loss_func:
        return to_detach(out), yb[0].detach()
    loss = loss_func(out, *yb)
    return loss.detach().cpu()


def validate(model: nn.Module, dl, loss_func=None, cb_handler=None, average: bool = True, n_batch=None):
    model.eval()
    with torch.no_grad():
        val_losses, nums = [], []
        for xb, yb in dl:
            xb, yb = cb_handler.on_batch_begin(xb, yb, train=False)
            val_losses.append(loss_batch(model, xb, yb, loss_func, cb_handler=cb_handler))  # expect: TML004
            nums.append(yb.shape[0])
            if n_batch and len(nums) >= n_batch:
                break
        if average:
            return float((torch.stack(val_losses) * torch.tensor(nums)).sum() / sum(nums))
        return val_losses


def get_preds(model: nn.Module, dl, cb_handler=None, activ=None, n_batch=None):
    res = [torch.cat(o).cpu() for o in zip(*validate(model, dl, cb_handler=cb_handler, average=False, n_batch=n_batch))]
    if activ is not None:
        res[0] = activ(res[0])
    return res
