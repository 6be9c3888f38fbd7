# Source: https://github.com/hszhao/semseg/issues/60
# Report: The segmentation validate() ran output = model(input) with autograd enabled after model.eval(), and training hit "out of memory" around validation until the forward was wrapped in torch.no_grad().
# Shape: a validate() loop that switches to eval mode but calls the network with gradients on, then computes loss and intersection/union on the GPU from the graph-carrying output.
# Expect: TML003 line 33
import time

import torch


def intersection_and_union_gpu(output, target, k, ignore_index=255):
    output = output.view(-1)
    target = target.view(-1)
    output[target == ignore_index] = ignore_index
    intersection = output[output == target]
    area_intersection = torch.histc(intersection.float(), bins=k, min=0, max=k - 1)
    area_output = torch.histc(output.float(), bins=k, min=0, max=k - 1)
    area_target = torch.histc(target.float(), bins=k, min=0, max=k - 1)
    return area_intersection, area_output + area_target - area_intersection, area_target


def validate(val_loader, model, criterion, classes, logger):
    logger.info(">>>>>>>>>>>>>>>> Start Evaluation >>>>>>>>>>>>>>>>")
    loss_sum, n_seen = 0.0, 0
    inter_sum = torch.zeros(classes, device="cuda")
    union_sum = torch.zeros(classes, device="cuda")
    target_sum = torch.zeros(classes, device="cuda")

    model.eval()
    end = time.time()
    for i, (input, target) in enumerate(val_loader):
        input = input.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        output = model(input)  # expect: TML003
        loss = criterion(output, target)

        pred = output.max(1)[1]
        inter, union, tgt = intersection_and_union_gpu(pred, target, classes)
        inter_sum += inter
        union_sum += union
        target_sum += tgt
        loss_sum += loss.item() * input.size(0)
        n_seen += input.size(0)
        if (i + 1) % 10 == 0:
            logger.info("Test: [{}/{}] batch {:.3f}s".format(i + 1, len(val_loader), time.time() - end))
        end = time.time()

    iou = inter_sum / (union_sum + 1e-10)
    acc = inter_sum / (target_sum + 1e-10)
    return loss_sum / n_seen, iou.mean().item(), acc.mean().item()
