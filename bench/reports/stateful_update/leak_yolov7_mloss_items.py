# Source: https://github.com/WongKinYiu/yolov7/blob/main/utils/loss.py
# Report: YOLOv7 detection trainer, one edit away from the repo: the .detach() on the loss_items that ComputeLoss returns is dropped
# Shape: loss_items (torch.cat of the attached lbox/lobj/lcls) come back from a callable loss class defined above; the running mean mloss = (mloss * i + loss_items) / (i + 1) reads its own previous value, so each step's graph is chained to the last for the whole epoch
# Expect: TML005 line 85
import math
from copy import deepcopy

import torch
import torch.nn as nn
from torch.cuda import amp


class ModelEMA:
    def __init__(self, model, decay=0.9999, updates=0):
        self.ema = deepcopy(model).eval()
        self.updates = updates
        self.decay = lambda x: decay * (1 - math.exp(-x / 2000))
        for p in self.ema.parameters():
            p.requires_grad_(False)

    def update(self, model):
        with torch.no_grad():
            self.updates += 1
            d = self.decay(self.updates)
            msd = model.state_dict()
            for k, v in self.ema.state_dict().items():
                if v.dtype.is_floating_point:
                    v *= d
                    v += (1. - d) * msd[k].detach()


class ComputeLoss:
    def __init__(self, model, hyp):
        device = next(model.parameters()).device
        self.BCEcls = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([hyp["cls_pw"]], device=device))
        self.BCEobj = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([hyp["obj_pw"]], device=device))
        self.balance = [4.0, 1.0, 0.4]
        self.hyp = hyp

    def __call__(self, p, targets):
        device = targets.device
        lcls, lbox, lobj = torch.zeros(1, device=device), torch.zeros(1, device=device), torch.zeros(1, device=device)
        tcls, tbox, indices = self.build_targets(p, targets)
        for i, pi in enumerate(p):
            b, a, gj, gi = indices[i]
            tobj = torch.zeros_like(pi[..., 0])
            if b.shape[0]:
                ps = pi[b, a, gj, gi]
                iou = self.box_iou(ps[:, :4], tbox[i])
                lbox += (1.0 - iou).mean()
                tobj[b, a, gj, gi] = iou.detach().clamp(0).type(tobj.dtype)
                lcls += self.BCEcls(ps[:, 5:], tcls[i])
            lobj += self.BCEobj(pi[..., 4], tobj) * self.balance[i]
        lbox *= self.hyp["box"]
        lobj *= self.hyp["obj"]
        lcls *= self.hyp["cls"]
        bs = tobj.shape[0]
        loss = lbox + lobj + lcls
        return loss * bs, torch.cat((lbox, lobj, lcls, loss))

    def build_targets(self, p, targets):
        raise NotImplementedError

    def box_iou(self, pbox, tbox):
        raise NotImplementedError


def train_one_epoch(model, ema, optimizer, scaler, dataloader, compute_loss, device, epoch, accumulate):
    model.train()
    nb = len(dataloader)
    mloss = torch.zeros(4, device=device)
    optimizer.zero_grad()
    for i, (imgs, targets, paths, _) in enumerate(dataloader):
        ni = i + nb * epoch
        imgs = imgs.to(device, non_blocking=True).float() / 255.0
        with amp.autocast(enabled=True):
            pred = model(imgs)
            loss, loss_items = compute_loss(pred, targets.to(device))
        scaler.scale(loss).backward()
        if ni % accumulate == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
            ema.update(model)
        mloss = (mloss * i + loss_items) / (i + 1)  # expect: TML005
        if i % 50 == 0:
            print(("%10s" + "%10.4g" * 4) % (f"{epoch}", *mloss))
    return mloss.cpu().tolist()
