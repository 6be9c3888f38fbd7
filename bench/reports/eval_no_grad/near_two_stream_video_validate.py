# Source: https://github.com/jeffreyyihuang/two-stream-action-recognition/blob/8458458b4abe97e36c4987148a7dfcb24273cafe/spatial_cnn.py
# Report: audit of a two-stream action-recognition trainer whose validation relied on the removed volatile=True flag; the fix is to run validation with autograd disabled
# Shape: the same SpatialCNN trainer; validate_1epoch() is decorated with @torch.no_grad() and still folds detached numpy frame scores into the per-video dict
# Expect: near-miss: must be silent
import time

import numpy as np
import torch
import torch.nn as nn
from tqdm import tqdm

from utils import AverageMeter, accuracy, record_info


class SpatialCNN:
    """RGB stream of a two-stream action recogniser (UCF101, frame-level model)."""

    def __init__(self, model, train_loader, test_loader, test_video, lr=5e-4, nb_epochs=500, device="cuda"):
        self.model = model.to(device)
        self.train_loader, self.test_loader = train_loader, test_loader
        self.test_video = test_video  # video name -> 1-based class index
        self.nb_epochs, self.device = nb_epochs, device
        self.criterion = nn.CrossEntropyLoss().to(device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr, momentum=0.9)
        self.scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(self.optimizer, "min", patience=1)
        self.best_prec1 = 0.0

    def train_1epoch(self):
        losses, top1 = AverageMeter(), AverageMeter()
        self.model.train()
        for data_dict, label in tqdm(self.train_loader):
            label = label.to(self.device, non_blocking=True)
            output = 0
            for key in sorted(data_dict):  # a few frames sampled per video
                output = output + self.model(data_dict[key].to(self.device, non_blocking=True))
            loss = self.criterion(output, label)
            prec1, _ = accuracy(output.detach(), label, topk=(1, 5))
            losses.update(loss.item(), label.size(0))
            top1.update(prec1.item(), label.size(0))
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        record_info({"Loss": [round(losses.avg, 5)], "Prec@1": [round(top1.avg, 4)]}, "record/rgb_train.csv", "train")

    @torch.no_grad()
    def validate_1epoch(self):
        self.model.eval()
        self.dic_video_level_preds = {}
        start = time.time()
        for keys, data, label in tqdm(self.test_loader):
            data = data.to(self.device, non_blocking=True)
            output = self.model(data)
            preds = output.detach().cpu().numpy()
            for j in range(preds.shape[0]):
                video = keys[j].split("/", 1)[0]
                if video not in self.dic_video_level_preds:
                    self.dic_video_level_preds[video] = preds[j, :].copy()
                else:
                    self.dic_video_level_preds[video] += preds[j, :]
        top1, top5 = self.frame2_video_level_accuracy()
        record_info({"Prec@1": [round(top1, 3)], "Prec@5": [round(top5, 3)], "Time": [round(time.time() - start, 1)]}, "record/rgb_test.csv", "test")
        return top1

    def frame2_video_level_accuracy(self):
        names = sorted(self.dic_video_level_preds)
        scores = np.stack([self.dic_video_level_preds[n] for n in names])
        labels = np.array([int(self.test_video[n]) - 1 for n in names])
        ranked = np.argsort(-scores, axis=1)
        top1 = float((ranked[:, 0] == labels).mean() * 100)
        top5 = float((ranked[:, :5] == labels[:, None]).any(axis=1).mean() * 100)
        return top1, top5

    def run(self):
        for epoch in range(self.nb_epochs):
            self.train_1epoch()
            prec1 = self.validate_1epoch()
            self.scheduler.step(-prec1)
            if prec1 > self.best_prec1:
                self.best_prec1 = prec1
                torch.save({"epoch": epoch, "state_dict": self.model.state_dict()}, "record/spatial_best.pth.tar")
