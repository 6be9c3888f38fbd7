# Source: https://github.com/yuanzhao-CVLAB/DecoupleMAD/blob/d634e43aabbad591931cd4773fbee9edfac688e7/main.py
# Report: audit of an RGB-D anomaly trainer: train_step returns (loss, dict) and a LossLog object sums each dict value into loss_sum per step; the repo converts with .item() inside train_step, this variant returns the live loss components
# Shape: the trainer's train_step hands back a dict of graph-attached component losses; train_one_epoch passes it to LossLog.update, whose body does loss_sum += value for the whole epoch
# Expect: TML001 line 63
import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm


class LossLog:
    def __init__(self):
        self.reset()

    def reset(self):
        self.loss_dict = {}

    def update(self, loss_dict):
        for name, value in loss_dict.items():
            entry = self.loss_dict.setdefault(name, {"loss_sum": 0.0, "count": 0})
            entry["loss_sum"] += value
            entry["count"] += 1

    def average(self, name):
        entry = self.loss_dict[name]
        return entry["loss_sum"] / max(entry["count"], 1)

    def __str__(self):
        return " ".join("%s: %.3f" % (k, self.average(k)) for k in self.loss_dict)


class DistillTrainer:
    def __init__(self, teacher, student, decoder):
        self.teacher = teacher.eval()
        self.student = student
        self.decoder = decoder

    @staticmethod
    def cos_distance(feats, recs):
        total = 0
        for f, r in zip(feats, recs):
            total = total + (1 - F.cosine_similarity(f.flatten(1), r.flatten(1))).mean()
        return total

    def train_step(self, batch):
        rgb, depth = batch["RGB"].cuda(), batch["Depth"].cuda()
        with torch.no_grad():
            t_rgb, t_depth = self.teacher(rgb), self.teacher(depth)
        rec_rgb, rec_depth = self.decoder(self.student(torch.cat([rgb, depth], 1)))
        rgb_loss = self.cos_distance(t_rgb, rec_rgb)
        depth_loss = self.cos_distance(t_depth, rec_depth)
        loss = rgb_loss + depth_loss
        return loss, {"Total_Loss": loss, "RGB": rgb_loss, "Depth": depth_loss}


def train_one_epoch(epoch, trainer, optimizer, scheduler, avg_loss_log, loader):
    bar = tqdm(loader, ncols=150)
    for batch in bar:
        loss, loss_parts = trainer.train_step(batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        avg_loss_log.update(loss_parts)  # expect: TML001
        bar.set_description("Epoch:%d, %s lr: %.6f" % (epoch, avg_loss_log, optimizer.param_groups[0]["lr"]))
        scheduler.step()


def train(trainer, loader, epochs=200):
    params = list(trainer.student.parameters()) + list(trainer.decoder.parameters())
    optimizer = torch.optim.AdamW(params, lr=1e-3, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, epochs * len(loader))
    avg_loss_log = LossLog()
    for epoch in range(epochs):
        avg_loss_log.reset()
        train_one_epoch(epoch, trainer, optimizer, scheduler, avg_loss_log, loader)
        if (epoch + 1) % 10 == 0:
            torch.save({"student": trainer.student.state_dict(),
                        "decoder": trainer.decoder.state_dict()}, f"ckpt_{epoch}.pth")
