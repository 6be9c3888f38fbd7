# Source: https://github.com/OpenGVLab/OmniQuant/pull/43
# Report: GPU memory grew from ~15 GB to ~20 GB over each epoch of OmniQuant's per-layer LWC/LET calibration; `loss_list.append(loss.data)` kept every MSE loss (a view of its GPU storage) and `norm_list.append(norm.data)` every grad norm on the GPU until the epoch ended; fixed with `.detach().cpu()` and `.cpu()` (source note: fix commit 3116a91979387561043233ef91aa3a0ab15f33b3, quantize/omniquant.py)
# Shape: the merged fix: the loss is stored as loss.detach().cpu(), the grad norm is moved to the CPU before .data, and the grad-norm helper runs under @torch.no_grad(); torch.stack once after the inner loop
# Expect: near-miss: must be silent
import math

import torch
import torch.nn as nn


@torch.no_grad()
def ampscaler_get_grad_norm(parameters, norm_type: float = 2.0) -> torch.Tensor:
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    parameters = [p for p in parameters if p.grad is not None]
    if len(parameters) == 0:
        return torch.tensor(0.0)
    device = parameters[0].grad.device
    norms = [torch.norm(p.grad.detach(), norm_type).to(device) for p in parameters]
    return torch.norm(torch.stack(norms), norm_type)


class NativeScalerWithGradNormCount:
    state_dict_key = "amp_scaler"

    def __init__(self):
        self._scaler = torch.cuda.amp.GradScaler()

    def __call__(self, loss, optimizer, clip_grad=None, parameters=None):
        self._scaler.scale(loss).backward()
        self._scaler.unscale_(optimizer)
        if clip_grad is not None:
            norm = torch.nn.utils.clip_grad_norm_(parameters, clip_grad)
        else:
            norm = ampscaler_get_grad_norm(parameters)
        self._scaler.step(optimizer)
        self._scaler.update()
        return norm


def calibrate_layer(i, qlayer, quant_inps, fp_inps, attention_mask, position_ids, args, logger):
    loss_func = nn.MSELoss()
    optimizer = torch.optim.AdamW(
        [{"params": qlayer.let_parameters(), "lr": args.let_lr},
         {"params": qlayer.lwc_parameters(), "lr": args.lwc_lr}],
        weight_decay=args.wd)
    loss_scaler = NativeScalerWithGradNormCount()

    for epochs in range(args.epochs):
        loss_list = []
        norm_list = []
        for j in range(args.nsamples // args.batch_size):
            index = j * args.batch_size
            with torch.cuda.amp.autocast():
                qlayer.smooth_and_quant_temporary()
                quant_out = qlayer(quant_inps[index:index + args.batch_size], attention_mask=attention_mask, position_ids=position_ids)[0]
                loss = loss_func(fp_inps[index:index + args.batch_size], quant_out)
            if not math.isfinite(loss.item()):
                logger.info("Loss is NAN, stopping training")
                return None
            loss_list.append(loss.detach().cpu())
            optimizer.zero_grad()
            norm = loss_scaler(loss, optimizer, parameters=qlayer.omni_parameters()).cpu()
            norm_list.append(norm.data)

        loss_mean = torch.stack(loss_list).mean()
        norm_mean = torch.stack(norm_list).mean()
        logger.info(f"layer {i} iter {epochs} loss:{loss_mean} norm:{norm_mean} "
                    f"max memory_allocated {torch.cuda.max_memory_allocated() / 1024 ** 2}")
    qlayer.clear_temp_variable()
    del optimizer
    return qlayer
