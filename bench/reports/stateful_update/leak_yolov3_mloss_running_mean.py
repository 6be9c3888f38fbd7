# Source: https://github.com/ultralytics/yolov3/blob/0005823d1f1cba065fee9e531a6bd26111ac0b2a/train.py
# Report: Audited idiom: train() keeps a running mean of loss components, mloss = (mloss * i + loss_items) / (i + 1), where loss_items comes from compute_loss() returning torch.cat((lxy, lwh, lconf, lcls, loss)).detach(); gradients are accumulated over `accumulate` batches before optimizer.step(); optimizer.zero_grad().
# Shape: Same train loop and compute_loss helper; the helper returns the concatenated loss items without .detach(), so the loop-carried mloss links every step's loss graph to the previous one (value travels out of a helper as the second tuple element).
# Expect: TML005 line 66; TML001 line 66

import random
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def compute_loss(p, targets, model, build_targets):
    ft = torch.cuda.FloatTensor if p[0].is_cuda else torch.Tensor
    lxy, lwh, lcls, lconf = ft([0]), ft([0]), ft([0]), ft([0])
    txy, twh, tcls, indices = build_targets(model, targets)
    h = model.hyp
    MSE = nn.MSELoss()
    CE = nn.CrossEntropyLoss()
    BCE = nn.BCEWithLogitsLoss()
    for i, pi0 in enumerate(p):
        b, a, gj, gi = indices[i]
        tconf = torch.zeros_like(pi0[..., 0])
        if len(b):
            pi = pi0[b, a, gj, gi]
            tconf[b, a, gj, gi] = 1.0
            lxy += (h['xy'] * 4) * MSE(torch.sigmoid(pi[..., 0:2]), txy[i])
            lwh += (h['wh'] * 4) * MSE(pi[..., 2:4], twh[i])
            lcls += (h['cls'] * 4) * CE(pi[..., 5:], tcls[i])
        lconf += (h['conf'] * 64) * BCE(pi0[..., 4], tconf)
    loss = lxy + lwh + lconf + lcls
    # fork: items returned still attached (the .detach() was dropped)
    return loss, torch.cat((lxy, lwh, lconf, lcls, loss))


def train(model, dataloader, optimizer, scheduler, build_targets, device, epochs, accumulate=8,
          multi_scale=True, img_size_min=10, img_size_max=19):
    nb = len(dataloader)
    img_size = 416
    t = time.time()
    for epoch in range(epochs):
        model.train()
        scheduler.step()
        mloss = torch.zeros(5).to(device)  # mean losses
        for i, (imgs, targets, _, _) in enumerate(dataloader):
            imgs = imgs.to(device)
            targets = targets.to(device)
            if multi_scale and (i + 1 + nb * epoch) / accumulate % 10 == 0:
                img_size = random.choice(range(img_size_min, img_size_max + 1)) * 32
            scale_factor = img_size / max(imgs.shape[-2:])
            imgs = F.interpolate(imgs, scale_factor=scale_factor, mode='bilinear', align_corners=False)

            pred = model(imgs)
            loss, loss_items = compute_loss(pred, targets, model, build_targets)
            if torch.isnan(loss):
                print('WARNING: nan loss detected, ending training')
                return mloss
            loss.backward()

            # Accumulate gradient for x batches before optimizing
            if (i + 1) % accumulate == 0 or (i + 1) == nb:
                optimizer.step()
                optimizer.zero_grad()

            mloss = (mloss * i + loss_items) / (i + 1)  # expect: TML005, TML001
            s = ('%8s%12s' + '%10.3g' * 7) % (
                '%g/%g' % (epoch, epochs - 1), '%g/%g' % (i, nb - 1), *mloss, len(targets), time.time() - t)
            t = time.time()
            print(s)
    return mloss
