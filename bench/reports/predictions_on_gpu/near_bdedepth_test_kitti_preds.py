# Source: https://github.com/LiuJF1226/BDEdepth/blob/main/train.py
# Report: BDEdepth (Monodepth2-DDP based) evaluates KITTI after every epoch: test_kitti() collects the predicted disparities of the whole test split, then computes median-scaled depth errors
# Shape: train() calls self.test_kitti() inside `with torch.no_grad():`; each batch's disparity is moved with .cpu() before pred_disps.append(), and torch.cat runs once after the loop
# Expect: near-miss: must be silent
import logging

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def disp_to_depth(disp, min_depth, max_depth):
    min_disp, max_disp = 1 / max_depth, 1 / min_depth
    scaled_disp = min_disp + (max_disp - min_disp) * disp
    return scaled_disp, 1 / scaled_disp


def compute_depth_errors(gt, pred):
    thresh = torch.max(gt / pred, pred / gt)
    a1 = (thresh < 1.25).float().mean()
    abs_rel = torch.mean(torch.abs(gt - pred) / gt)
    rmse = torch.sqrt(((gt - pred) ** 2).mean())
    return [abs_rel.item(), rmse.item(), a1.item()]


class DepthDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 1, 3, padding=1)

    def forward(self, feats):
        return {("disp", 0): torch.sigmoid(F.interpolate(self.conv(feats), scale_factor=4))}


class Trainer:
    def __init__(self, opt, train_loader, test_loader, gt_depths):
        self.opt = opt
        self.device = torch.device("cuda")
        self.models = {
            "encoder": nn.Sequential(nn.Conv2d(3, 64, 7, stride=4, padding=3), nn.ReLU()).to(self.device),
            "depth": DepthDecoder().to(self.device),
        }
        params = [p for m in self.models.values() for p in m.parameters()]
        self.model_optimizer = torch.optim.Adam(params, opt.learning_rate)
        self.train_loader = train_loader
        self.test_loader = test_loader
        self.gt_depths = gt_depths
        self.epoch = 0

    def set_train(self):
        for m in self.models.values():
            m.train()

    def set_eval(self):
        for m in self.models.values():
            m.eval()

    def train(self):
        for self.epoch in range(self.opt.num_epochs):
            self.run_epoch()
            with torch.no_grad():
                self.test_kitti()

    def run_epoch(self):
        self.set_train()
        for batch_idx, inputs in enumerate(self.train_loader):
            color = inputs[("color_aug", 0, 0)].to(self.device)
            target = inputs[("color", 0, 0)].to(self.device)
            outputs = self.models["depth"](self.models["encoder"](color))
            losses = {"loss": (outputs[("disp", 0)] - target.mean(1, keepdim=True)).abs().mean()}
            self.model_optimizer.zero_grad()
            losses["loss"].backward()
            self.model_optimizer.step()

    def test_kitti(self):
        logging.info("Test the model at epoch {} \n".format(self.epoch))
        MIN_DEPTH, MAX_DEPTH = 1e-3, 80
        self.set_eval()
        pred_disps = []
        for idx, data in enumerate(self.test_loader):
            input_color = data[("color", 0, 0)].to(self.device)
            output = self.models["depth"](self.models["encoder"](input_color))
            pred_disp, _ = disp_to_depth(output[("disp", 0)], self.opt.min_depth, self.opt.max_depth)
            pred_disps.append(pred_disp.cpu()[:, 0])
        pred_disps = torch.cat(pred_disps, dim=0)

        errors, ratios = [], []
        for i in range(pred_disps.shape[0]):
            gt_depth = torch.from_numpy(self.gt_depths[i])
            gt_height, gt_width = gt_depth.shape[:2]
            pred_disp = F.interpolate(pred_disps[i:i + 1].unsqueeze(0), (gt_height, gt_width),
                                      mode="bilinear", align_corners=False)
            pred_depth = 1 / pred_disp[0, 0, :]
            mask = (gt_depth > MIN_DEPTH) & (gt_depth < MAX_DEPTH)
            pred_depth, gt_depth = pred_depth[mask], gt_depth[mask]
            ratio = torch.median(gt_depth) / torch.median(pred_depth)
            ratios.append(ratio.item())
            pred_depth = torch.clamp(pred_depth * ratio, MIN_DEPTH, MAX_DEPTH)
            errors.append(compute_depth_errors(gt_depth, pred_depth))

        ratios = np.array(ratios)
        med = np.median(ratios)
        logging.info(" Scaling ratios | med: {:0.3f} | std: {:0.3f}".format(med, np.std(ratios / med)))
        mean_errors = np.array(errors).mean(0)
        logging.info(("{: 8.3f} | " * 3).format(*mean_errors.tolist()))
        self.set_train()
