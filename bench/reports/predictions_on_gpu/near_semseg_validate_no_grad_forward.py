# Source: https://github.com/hszhao/semseg/issues/60
# Report: The segmentation validate() ran output = model(input) with autograd enabled after model.eval(), and training hit "out of memory" around validation until the forward was wrapped in torch.no_grad().
# Shape: the fix from the report: only the forward call is wrapped in torch.no_grad(); the loss and IoU bookkeeping that follow use the graph-free output.
# Expect: near-miss: must be silent
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


def validate(val_loader, model, criterion, classes):
    loss_sum, n_seen = 0.0, 0
    inter_sum = torch.zeros(classes, device="cuda")
    union_sum = torch.zeros(classes, device="cuda")

    model.eval()
    for input, target in val_loader:
        input = input.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        with torch.no_grad():
            output = model(input)
        loss = criterion(output, target)

        pred = output.max(1)[1]
        inter, union, _ = intersection_and_union_gpu(pred, target, classes)
        inter_sum += inter
        union_sum += union
        loss_sum += loss.item() * input.size(0)
        n_seen += input.size(0)

    iou = inter_sum / (union_sum + 1e-10)
    return loss_sum / n_seen, iou.mean().item()
