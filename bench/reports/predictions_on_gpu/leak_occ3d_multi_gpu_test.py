# Source: https://github.com/CVPR2023-3D-Occupancy-Prediction/CVPR2023-3D-Occupancy-Prediction/issues/6
# Report: testing the BEVFormer occupancy baseline runs out of GPU memory after ~3500 scenes on a 24 GB card although training is stable; fixed by moving each result to CPU numpy before keeping it
# Shape: custom_multi_gpu_test runs the model under no_grad and extends occ_results with the raw 200x200x16 GPU prediction of every scene; the conversion to numpy only happens later in evaluate_miou
# Expect: TML004 line 53
import os
import pickle
import time

import numpy as np
import torch
import torch.nn as nn


class OccHead(nn.Module):
    def __init__(self, num_classes=18, bev=(200, 200), z=16):
        super().__init__()
        self.num_classes = num_classes
        self.bev = bev
        self.z = z
        self.encoder = nn.Conv2d(3, 64, 3, padding=1)
        self.classifier = nn.Conv3d(64, num_classes, 1)

    def forward(self, img, return_loss=False, rescale=True):
        feat = self.encoder(img)
        feat = nn.functional.interpolate(feat, size=self.bev)
        vox = feat.unsqueeze(-1).expand(-1, -1, -1, -1, self.z)
        logits = self.classifier(vox)
        return logits.argmax(dim=1)


def get_dist_info():
    return 0, 1


def collect_results_cpu(result_part, size, tmpdir=None):
    if tmpdir is not None:
        os.makedirs(tmpdir, exist_ok=True)
        with open(os.path.join(tmpdir, "part_0.pkl"), "wb") as f:
            pickle.dump(result_part, f)
    return result_part[:size]


def custom_multi_gpu_test(model, data_loader, tmpdir=None):
    model.eval()
    occ_results = []
    rank, world_size = get_dist_info()
    time.sleep(2)
    for i, data in enumerate(data_loader):
        with torch.no_grad():
            result = model(data["img"].cuda(), return_loss=False, rescale=True)
            bs = result.shape[0]
            assert bs == 1, "Evaluation only supports batch_size=1 in this version"
            occ_results.extend([result])  # expect: TML004
    tmpdir = tmpdir + "_occ" if tmpdir is not None else None
    return collect_results_cpu(occ_results, len(data_loader.dataset), tmpdir)


class MetricMIoU:
    def __init__(self, num_classes=18):
        self.num_classes = num_classes
        self.hist = np.zeros((num_classes, num_classes))

    def add_batch(self, pred, gt):
        k = (gt >= 0) & (gt < self.num_classes)
        self.hist += np.bincount(self.num_classes * gt[k].astype(int) + pred[k], minlength=self.num_classes ** 2).reshape(self.num_classes, self.num_classes)


def evaluate_miou(occ_results, gts):
    metric = MetricMIoU()
    for index, occ_pred in enumerate(occ_results):
        occ_pred = occ_pred.squeeze(dim=0).cpu().numpy().astype(np.uint8)
        metric.add_batch(occ_pred, gts[index])
    return metric.hist
