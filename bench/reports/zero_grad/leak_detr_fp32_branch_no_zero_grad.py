# Source: https://github.com/IDEA-Research/DAB-DETR/issues/58
# Report: train_one_epoch cleared gradients only in the AMP branch; the plain fp32 branch called backward and optimizer.step with no zero_grad, so gradients summed over all iterations (maintainer: a bug in the implementation)
# Shape: DETR-style epoch loop with loss dict reduction and a MetricLogger; the amp path resets grads before scaler backward, the else path never resets them before optimizer.step
# Expect: TML002 line 49
import math
import sys

import torch

import util.misc as utils


def train_one_epoch(model, criterion, data_loader, optimizer, device, epoch, max_norm=0.0, args=None):
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
    model.train()
    criterion.train()
    metric_logger = utils.MetricLogger(delimiter="  ")
    header = "Epoch: [{}]".format(epoch)

    for samples, targets in metric_logger.log_every(data_loader, 10, header):
        samples = samples.to(device)
        targets = [{k: v.to(device) for k, v in t.items()} for t in targets]

        with torch.cuda.amp.autocast(enabled=args.amp):
            outputs = model(samples, targets) if args.use_dn else model(samples)
            loss_dict = criterion(outputs, targets)
            weight_dict = criterion.weight_dict
            losses = sum(loss_dict[k] * weight_dict[k] for k in loss_dict.keys() if k in weight_dict)

        loss_dict_reduced = utils.reduce_dict(loss_dict)
        loss_dict_reduced_scaled = {k: v * weight_dict[k] for k, v in loss_dict_reduced.items() if k in weight_dict}
        loss_value = sum(loss_dict_reduced_scaled.values()).item()
        if not math.isfinite(loss_value):
            print("Loss is {}, stopping training".format(loss_value))
            sys.exit(1)

        if args.amp:
            optimizer.zero_grad()
            scaler.scale(losses).backward()
            if max_norm > 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(optimizer)
            scaler.update()
        else:
            losses.backward()
            if max_norm > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            optimizer.step()  # expect: TML002

        metric_logger.update(loss=loss_value, **loss_dict_reduced_scaled)
        metric_logger.update(lr=optimizer.param_groups[0]["lr"])

    metric_logger.synchronize_between_processes()
    return {k: meter.global_avg for k, meter in metric_logger.meters.items() if meter.count > 0}
