# Source: https://github.com/fudan-zvg/meta-prompts/blob/a3e8583098c64c8854a85b260d80cb8335402469/depth/train.py
# Report: issue https://github.com/fudan-zvg/meta-prompts/issues/8 : depth training fits a 4090 but validate() runs out of memory at `pred = model(input_RGB)`; the repository's validate() wraps the (flip/shift-window enlarged) forward in torch.no_grad()
# Shape: validate() after model.eval() runs the depth model with autograd on; each batch saves all activations for a backward that never comes, and the flip-test doubling makes the peak worse
# Expect: TML003 line 34
import torch

import utils.logging as logging
import utils.metrics as metrics
import utils


def validate(val_loader, model, criterion_d, device, epoch, args):
    depth_loss = logging.AverageMeter()
    model.eval()
    ddp_logger = utils.MetricLogger()
    result_metrics = {name: 0.0 for name in metrics.METRIC_NAMES}

    for batch_idx, batch in enumerate(val_loader):
        input_RGB = batch["image"].to(device)
        depth_gt = batch["depth"].to(device)

        if args.shift_window_test:
            bs, _, h, w = input_RGB.shape
            interval = (w - h) // (args.shift_size - 1)
            sliding_images = []
            sliding_masks = torch.zeros((bs, 1, h, w), device=input_RGB.device)
            for i in range(args.shift_size):
                sliding_images.append(input_RGB[..., :, i * interval:i * interval + h])
                sliding_masks[..., :, i * interval:i * interval + h] += 1
            input_RGB = torch.cat(sliding_images, dim=0)
        if args.flip_test:
            input_RGB = torch.cat((input_RGB, torch.flip(input_RGB, [3])), dim=0)

        pred = model(input_RGB)  # expect: TML003
        pred_d = list(pred.values())[-1]
        if args.flip_test:
            half = pred_d.shape[0] // 2
            pred_d = (pred_d[:half] + torch.flip(pred_d[half:], [3])) / 2.0
        if args.shift_window_test:
            pred_s = torch.zeros((bs, 1, h, w), device=pred_d.device)
            for i in range(args.shift_size):
                pred_s[..., :, i * interval:i * interval + h] += pred_d[i:i + 1]
            pred_d = pred_s / sliding_masks

        pred_d = pred_d.squeeze()
        depth_gt = depth_gt.squeeze()
        loss_d = criterion_d(pred_d, depth_gt)
        ddp_logger.update(loss_d=loss_d.item())
        depth_loss.update(loss_d.item(), input_RGB.size(0))

        pred_crop, gt_crop = metrics.cropping_img(args, pred_d, depth_gt)
        computed_result = metrics.eval_depth(pred_crop, gt_crop)
        ddp_logger.update(**computed_result)
        for key in result_metrics:
            result_metrics[key] += computed_result[key]

        if args.pro_bar:
            logging.progress_bar(batch_idx, len(val_loader), args.epochs, epoch)

    ddp_logger.synchronize_between_processes()
    for key in result_metrics:
        result_metrics[key] = ddp_logger.meters[key].global_avg
    return result_metrics, ddp_logger.meters["loss_d"].global_avg
