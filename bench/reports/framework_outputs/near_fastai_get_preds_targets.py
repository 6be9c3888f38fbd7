# Source: https://github.com/fastai/fastai/issues/2337
# Report: fastai v1 Learner.get_preds OOMed on big validation sets: loss_batch returned yb[0].detach() (still on the GPU) and validate() kept every batch's targets until torch.cat at the end
# Shape: fixed as the maintainer did: the targets also go through to_detach(), so each appended tuple holds only CPU tensors
# Expect: near-miss: must be silent
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
        return to_detach(out), to_detach(yb[0])
    loss = loss_func(out, *yb)
    return loss.detach().cpu()


def validate(model: nn.Module, dl, loss_func=None, cb_handler=None, average: bool = True, n_batch=None):
    model.eval()
    with torch.no_grad():
        val_losses, nums = [], []
        for xb, yb in dl:
            xb, yb = cb_handler.on_batch_begin(xb, yb, train=False)
            val_losses.append(loss_batch(model, xb, yb, loss_func, cb_handler=cb_handler))
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
