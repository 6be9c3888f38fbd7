# Source: https://github.com/gebilxs/Hdl-Bfl/blob/01c6c893c957c6d066d12f2a84dfde25392def46/CS_hdl/client.py
# Report: federated logit-distillation client: train() sums the weighted CE, KD-MSE and stage losses into total_* tensors without .item() across all local epochs, so every step's graph nodes stay referenced until train() returns
# Shape: a client class with a train() method; per-class logits are collected (detached, on CPU) for the server, while three running totals add the live loss tensors
# Expect: TML001 line 53; TML001 line 60; TML001 line 61
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F


def average_class_logits(per_class):
    return {c: torch.stack(vals).mean(dim=0) for c, vals in per_class.items()}


class DistillClient:
    def __init__(self, cid, model, loader, num_classes, args, device="cuda"):
        self.id = cid
        self.model = model.to(device)
        self.loader = loader
        self.num_classes = num_classes
        self.device = device
        self.local_epochs = args.local_epochs
        self.gt_weight = args.loss_gt_weight
        self.kd_weight = args.loss_kd_weight
        self.stage_weight = args.stage_loss_weight
        self.temperature = args.temperature
        self.ce = nn.CrossEntropyLoss()
        self.mse = nn.MSELoss()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=args.lr, momentum=0.9)
        self.global_logits = None
        self.logits = None

    def set_logits(self, global_logits):
        self.global_logits = {c: v.to(self.device) for c, v in global_logits.items()}

    def stage_loss(self, feats, teacher):
        s = F.log_softmax(feats / self.temperature, dim=1)
        t = F.softmax(teacher / self.temperature, dim=1)
        return F.kl_div(s, t, reduction="batchmean") * self.temperature ** 2

    def train(self):
        self.model.train()
        per_class = defaultdict(list)
        total_gt, total_kd, total_stage = 0, 0, 0
        for epoch in range(self.local_epochs):
            for x, y in self.loader:
                x, y = x.to(self.device), y.to(self.device)
                self.optimizer.zero_grad()
                out = self.model(x, return_features=True)
                logits, feats = out["logits"], out["features"]
                loss_gt = self.ce(logits, y)
                total_gt += loss_gt * self.gt_weight  # expect: TML001
                loss = loss_gt * self.gt_weight
                if self.global_logits is not None:
                    teacher = torch.stack([self.global_logits[int(c)] for c in y])
                    loss_kd = self.mse(logits, teacher) * self.kd_weight
                    loss_stage = self.stage_loss(self.model.project(feats), teacher) * self.stage_weight
                    loss = loss + loss_kd + loss_stage
                    total_kd += loss_kd  # expect: TML001
                    total_stage += loss_stage  # expect: TML001
                for i, c in enumerate(y.tolist()):
                    per_class[c].append(logits[i].detach().cpu())
                loss.backward()
                self.optimizer.step()
        self.logits = average_class_logits(per_class)
        n = max(1, len(self.loader) * self.local_epochs)
        print(f"client {self.id}: gt {total_gt / n} kd {total_kd / n} stage {total_stage / n}")
        return self.logits
