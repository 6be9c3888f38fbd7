# Source: https://github.com/Haoyu-Xie/PRCL/blob/e29cb66f4d4744f231df7d9e04367987c65644fa/prcl.py
# Report: audited per-epoch mIoU evaluation of the PRCL EMA teacher (semi-supervised segmentation on VOC/Cityscapes): test() is decorated with @torch.no_grad(), runs the DeepLabv3+ teacher over the whole test loader and feeds argmax maps into a confusion-matrix meter
# Shape: the repository's own shape: the decorator disables autograd for the whole function (here also used for the student, whose parameters require grad), the model call follows model.eval(), and only integer argmax maps reach the meter
# Expect: near-miss: must be silent
import time

import torch
import torch.nn.functional as F

from generalframeworks.util.meter import AverageMeter, ConfMatrix
from generalframeworks.util.miou import mean_intersection_over_union
from generalframeworks.util.torch_dist_sum import torch_dist_sum


@torch.no_grad()
def test(test_loader, model, rank, num_classes=21):
    batch_time = AverageMeter("Time", ":6.3f")
    data_time = AverageMeter("Data", ":6.3f")
    miou_meter = ConfMatrix(num_classes=num_classes, fmt=":6.4f", name="test_miou")
    model.eval()
    end = time.time()
    test_iter = iter(test_loader)
    for _ in range(len(test_loader)):
        data_time.update(time.time() - end)
        test_image, test_label = next(test_iter)
        test_image, test_label = test_image.cuda(), test_label.cuda()

        pred, _, _ = model(test_image)
        pred = F.interpolate(pred, size=test_label.shape[1:], mode="bilinear", align_corners=True)

        miou_meter.update(pred.argmax(1).flatten(), test_label.flatten())
        batch_time.update(time.time() - end)
        end = time.time()

    mat = torch_dist_sum(rank, miou_meter.mat)
    return mean_intersection_over_union(mat[0])


def run_epochs(train_fn, test_loader, model, start_epoch, total_epoch, rank):
    best_miou = 0
    for epoch in range(start_epoch, total_epoch):
        train_fn(epoch)
        miou = test(test_loader, model.module.ema_model, rank)
        student_miou = test(test_loader, model.module.model, rank)
        best_miou = max(best_miou, miou)
        if rank == 0:
            print("Epoch:{} * mIoU {:.4f} student {:.4f} Best_mIoU {:.4f}".format(epoch, miou, student_miou, best_miou))
        model.module.model.train()
        model.module.ema_model.train()
    return best_miou
