# Source: https://github.com/LanSaid/MoA/blob/86cc5f9287916b0277fbd637e76f14b0c90c03bf/moa/train.py
# Report: Kaggle MoA tabular-NN pipeline (k-fold, model built per fold) tracks train/valid loss with the classic AverageMeter; here train_fn passes the loss tensor instead of the repository's loss.item()
# Shape: losses.update(loss, batch_size) -> AverageMeter.update does self.sum += val * n on a meter that lives for the whole epoch, so every batch's graph-attached BCE loss is chained into sum/avg (the later loss / accumulation_steps rebinding does not help)
# Expect: TML001 line 48
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader


class CFG:
    gradient_accumulation_steps = 1
    max_grad_norm = 1000
    batch_size = 128
    epochs = 20
    lr = 1e-2
    weight_decay = 1e-6


class AverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def train_fn(train_loader, model, optimizer, epoch, scheduler, device):
    losses = AverageMeter()
    model.train()
    for step, (cont_x, cate_x, y) in enumerate(train_loader):
        cont_x, cate_x, y = cont_x.to(device), cate_x.to(device), y.to(device)
        batch_size = cont_x.size(0)
        pred = model(cont_x, cate_x)
        loss = nn.BCEWithLogitsLoss()(pred, y)
        losses.update(loss, batch_size)  # expect: TML001
        if CFG.gradient_accumulation_steps > 1:
            loss = loss / CFG.gradient_accumulation_steps
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), CFG.max_grad_norm)
        if (step + 1) % CFG.gradient_accumulation_steps == 0:
            scheduler.step()
            optimizer.step()
            optimizer.zero_grad()
    return losses.avg


def validate_fn(valid_loader, model, device):
    losses = AverageMeter()
    model.eval()
    val_preds = []
    for step, (cont_x, cate_x, y) in enumerate(valid_loader):
        cont_x, cate_x, y = cont_x.to(device), cate_x.to(device), y.to(device)
        batch_size = cont_x.size(0)
        with torch.no_grad():
            pred = model(cont_x, cate_x)
        loss = nn.BCEWithLogitsLoss()(pred, y)
        losses.update(loss.item(), batch_size)
        val_preds.append(pred.sigmoid().detach().cpu().numpy())
    return losses.avg, np.concatenate(val_preds)


def run_single_nn(cfg, train_dataset, valid_dataset, val_idx, n_rows, n_targets, model_cls, device, fold_num=0, seed=42):
    train_loader = DataLoader(train_dataset, batch_size=cfg.batch_size, shuffle=True, num_workers=4, pin_memory=True, drop_last=True)
    valid_loader = DataLoader(valid_dataset, batch_size=cfg.batch_size, shuffle=False, num_workers=4, pin_memory=True)
    model = model_cls(cfg)
    model.to(device)
    optimizer = optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    scheduler = optim.lr_scheduler.OneCycleLR(optimizer=optimizer, pct_start=0.1, div_factor=1e3, max_lr=1e-1,
                                              epochs=cfg.epochs, steps_per_epoch=len(train_loader))
    best_loss = np.inf
    oof = np.zeros((n_rows, n_targets))
    for epoch in range(cfg.epochs):
        train_loss = train_fn(train_loader, model, optimizer, epoch, scheduler, device)
        valid_loss, val_preds = validate_fn(valid_loader, model, device)
        print(f"epoch {epoch} TRAIN_LOSS {train_loss:.5f} VALID_LOSS {valid_loss:.5f}")
        if valid_loss < best_loss:
            best_loss = valid_loss
            oof = np.zeros((n_rows, n_targets))
            oof[val_idx] = val_preds
            torch.save(model.state_dict(), f"fold{fold_num}_seed{seed}.pth")
    return oof
