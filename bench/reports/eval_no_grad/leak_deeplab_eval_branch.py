# Source: https://github.com/chenxi116/DeepLabv3.pytorch/pull/18
# Report: evaluation of DeepLabv3 runs out of GPU memory; the PR "solves memory problems during evaluation by not tracking gradients"
# Shape: the test branch calls model.eval() and runs every image through the network with grad enabled, so each forward saves activations for a backward that never comes
# Expect: TML003 line 71
import os

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from PIL import Image


class AverageMeter(object):
    def __init__(self):
        self.val = None
        self.sum = None
        self.count = 0
        self.ema = None

    def update(self, val, n=1):
        if self.sum is None:
            self.sum = val * n
            self.ema = val
        else:
            self.sum = self.sum + val * n
            self.ema = 0.99 * self.ema + 0.01 * val
        self.val = val
        self.count += n


def inter_and_union(pred, mask, num_class):
    pred = np.asarray(pred, dtype=np.uint8).copy() + 1
    mask = np.asarray(mask, dtype=np.uint8).copy() + 1
    pred = pred * (mask > 0)
    inter = pred * (pred == mask)
    area_inter, _ = np.histogram(inter, bins=num_class, range=(1, num_class))
    area_pred, _ = np.histogram(pred, bins=num_class, range=(1, num_class))
    area_mask, _ = np.histogram(mask, bins=num_class, range=(1, num_class))
    return area_inter, area_pred + area_mask - area_inter


def run(args, model, dataset, loader, ckpt_fmt):
    if args.train:
        criterion = nn.CrossEntropyLoss(ignore_index=255)
        model = nn.DataParallel(model).cuda()
        model.train()
        optimizer = optim.SGD(model.parameters(), lr=args.base_lr, momentum=0.9)
        losses = AverageMeter()
        for epoch in range(args.epochs):
            for inputs, target in loader:
                outputs = model(inputs.cuda())
                loss = criterion(outputs, target.cuda())
                losses.update(loss.item(), args.batch_size)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
            torch.save({"epoch": epoch + 1, "state_dict": model.state_dict()},
                       ckpt_fmt % (epoch + 1))
    else:
        torch.cuda.set_device(args.gpu)
        model = model.cuda()
        model.eval()
        checkpoint = torch.load(ckpt_fmt % args.epochs, map_location="cpu")
        model.load_state_dict({k[7:]: v for k, v in checkpoint["state_dict"].items()})

        inter_meter = AverageMeter()
        union_meter = AverageMeter()
        for i in range(len(dataset)):
            inputs, target = dataset[i]
            outputs = model(inputs.cuda().unsqueeze(0))  # expect: TML003
            _, pred = torch.max(outputs, 1)
            pred = pred.data.cpu().numpy().squeeze().astype(np.uint8)
            mask = target.numpy().astype(np.uint8)
            Image.fromarray(pred).save(os.path.join("data/val", "%05d.png" % i))
            inter, union = inter_and_union(pred, mask, len(dataset.CLASSES))
            inter_meter.update(inter)
            union_meter.update(union)

        iou = inter_meter.sum / (union_meter.sum + 1e-10)
        print("Mean IoU: {0:.2f}".format(iou.mean() * 100))
