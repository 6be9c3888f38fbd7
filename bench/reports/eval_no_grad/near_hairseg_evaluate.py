# Source: https://github.com/YBIGTA/pytorch-hair-segmentation/blob/c81ea358bef7e4129c105ed37b08ddf7eaef5563/evaluate.py
# Report: evaluate.py after commit c81ea35 (fix for issue #28): the whole test loop runs inside torch.no_grad()
# Shape: forward under no_grad; the GPU meter only += fixed-size counts built from comparisons; durations keeps floats; torch.load has map_location
# Expect: near-miss: must be silent
import os
import time

import cv2
import numpy as np
import torch


class MultiThresholdMeasures:
    """Accuracy / IoU / F1 over thresholds 0.0 .. 1.0, counts kept on the GPU."""

    def __init__(self, device="cuda"):
        self._device = device
        self._thrs = torch.tensor([i / 10 for i in range(11)], device=device)
        self.reset()

    def reset(self):
        self._tp = torch.zeros(11, device=self._device)
        self._fp = torch.zeros(11, device=self._device)
        self._fn = torch.zeros(11, device=self._device)
        self._tn = torch.zeros(11, device=self._device)

    def update(self, output):
        logit, y = output
        n = y.size(0)
        y_pred = torch.sigmoid(logit).view(n, -1, 1).repeat(1, 1, 11) > self._thrs
        y = y.bool().view(n, -1, 1).repeat(1, 1, 11)
        self._tp += torch.sum(y_pred & y, dim=[0, 1]).float()
        self._tn += torch.sum(~y_pred & ~y, dim=[0, 1]).float()
        self._fp += torch.sum(y_pred & ~y, dim=[0, 1]).float()
        self._fn += torch.sum(~y_pred & y, dim=[0, 1]).float()

    def compute_iou(self):
        iou = self._tp / (self._tp + self._fp + self._fn)
        return [round(i.item(), 3) for i in iou]


def overlay(image_n, pred, mh, mw):
    mask_n = np.zeros((mh, mw, 3))
    mask_n[:, :, 0] = 255 * (pred >= 0.5)
    ih, iw, _ = image_n.shape
    top, left = (mh - ih) // 2, (mw - iw) // 2
    mask_n = mask_n[top:top + ih, left:left + iw, :]
    return image_n * 0.5 + mask_n * 0.5


def main(net_builder, ckpt_path, test_loader, img_dir, save_dir, device="cuda"):
    net = net_builder().to(device)
    state = torch.load(ckpt_path, map_location=device)
    net.load_state_dict(state["weight"])

    metric = MultiThresholdMeasures(device)
    durations = []
    imgs = [os.path.join(img_dir, k) for k in sorted(os.listdir(img_dir)) if k.endswith(".jpg")]

    with torch.no_grad():
        for i, (data, label) in enumerate(test_loader):
            print("[{:3d}/{:3d}] processing image... ".format(i + 1, len(test_loader)))
            net.eval()
            data, label = data.to(device), label.to(device)

            start = time.time()
            logit = net(data)
            durations.append(time.time() - start)

            pred = torch.sigmoid(logit.cpu())[0][0].data.numpy()
            image_n = overlay(cv2.imread(imgs[i]), pred, data.size(2), data.size(3))

            metric.update((logit, label))
            cv2.imwrite(os.path.join(save_dir, "figaro_img_%04d.png" % i), image_n)

    print("Avg-FPS:", sum(durations) / len(durations))
    print("IOU:", metric.compute_iou())
