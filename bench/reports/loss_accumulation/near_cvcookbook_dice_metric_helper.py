# Source: https://github.com/PacktPublishing/PyTorch-Computer-Vision-Cookbook/issues/11
# Report: Chapter 6 (single-object segmentation) runs CUDA out of memory after 26 epochs on 6 GB (72 on 15 GB); the maintainer points at the dice metric computed inside the loss_batch helper and suggests wrapping it in torch.no_grad()
# Shape: the fix from the thread (as in the repository's notebook): loss_batch() computes the dice metric under torch.no_grad(), so the metric_b it returns has no graph and loss_epoch() can sum it into running_metric
# Expect: near-miss: must be silent
import copy

import torch
import torch.nn.functional as F
from torch import optim
from torch.optim.lr_scheduler import ReduceLROnPlateau

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


def dice_loss(pred, target, smooth=1e-5):
    intersection = (pred * target).sum(dim=(2, 3))
    union = pred.sum(dim=(2, 3)) + target.sum(dim=(2, 3))
    dice = 2.0 * (intersection + smooth) / (union + smooth)
    loss = 1.0 - dice
    return loss.sum(), dice.sum()


def loss_func(pred, target):
    bce = F.binary_cross_entropy_with_logits(pred, target, reduction="sum")
    pred = torch.sigmoid(pred)
    dlv, _ = dice_loss(pred, target)
    return bce + dlv


def get_lr(opt):
    for param_group in opt.param_groups:
        return param_group["lr"]


def loss_batch(loss_func, output, target, opt=None):
    loss = loss_func(output, target)
    with torch.no_grad():
        pred = torch.sigmoid(output)
        _, metric_b = dice_loss(pred, target)

    if opt is not None:
        opt.zero_grad()
        loss.backward()
        opt.step()

    return loss.item(), metric_b


def loss_epoch(model, loss_func, dataset_dl, sanity_check=False, opt=None):
    running_loss = 0.0
    running_metric = 0.0
    len_data = len(dataset_dl.dataset)

    for xb, yb in dataset_dl:
        xb = xb.to(device)
        yb = yb.to(device)

        output = model(xb)
        loss_b, metric_b = loss_batch(loss_func, output, yb, opt)
        running_loss += loss_b

        if metric_b is not None:
            running_metric += metric_b

        if sanity_check is True:
            break

    loss = running_loss / float(len_data)
    metric = running_metric / float(len_data)
    return loss, metric


def train_val(model, params):
    num_epochs = params["num_epochs"]
    opt = optim.Adam(model.parameters(), lr=3e-4)
    lr_scheduler = ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=20)
    loss_history = {"train": [], "val": []}
    metric_history = {"train": [], "val": []}
    best_model_wts = copy.deepcopy(model.state_dict())
    best_loss = float("inf")

    for epoch in range(num_epochs):
        current_lr = get_lr(opt)
        print("Epoch {}/{}, current lr={}".format(epoch, num_epochs - 1, current_lr))

        model.train()
        train_loss, train_metric = loss_epoch(model, loss_func, params["train_dl"], params["sanity_check"], opt)
        loss_history["train"].append(train_loss)
        metric_history["train"].append(train_metric)

        model.eval()
        with torch.no_grad():
            val_loss, val_metric = loss_epoch(model, loss_func, params["val_dl"], params["sanity_check"])
        loss_history["val"].append(val_loss)
        metric_history["val"].append(val_metric)

        if val_loss < best_loss:
            best_loss = val_loss
            best_model_wts = copy.deepcopy(model.state_dict())
            torch.save(model.state_dict(), params["path2weights"])

        lr_scheduler.step(val_loss)
        print("train loss: %.6f, dice: %.2f" % (train_loss, 100 * train_metric))

    model.load_state_dict(best_model_wts)
    return model, loss_history, metric_history
