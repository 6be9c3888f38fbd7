# Source: https://github.com/LIVIAETS/SizeLoss_WSS/blob/746e2ffde3c6695c2425303cdda8b5e785b44835/main.py
# Report: weakly-supervised prostate MRI segmentation (PROMISE12); do_epoch logs every batch loss into a preallocated GPU tensor loss_log that is returned and copied into the run-long metrics dict; the repository writes loss.detach() there
# Shape: the repository's own code, kept: the per-batch loss is written as loss.detach() into the preallocated GPU log tensor, so loss_log and the run-long metrics dict never join the autograd graph
# Expect: near-miss: must be silent
from functools import reduce
from operator import add

import torch
import torch.nn.functional as F

from utils import dice_coef, probs2one_hot, tqdm_


def do_epoch(mode, net, device, loader, epc, loss_fns, loss_weights, C, optimizer=None):
    if mode == "train":
        net.train()
    else:
        net.eval()
    total_iteration = len(loader)
    total_images = len(loader.dataset)
    all_dices = torch.zeros((total_images, C), dtype=torch.float32, device=device)
    loss_log = torch.zeros((total_iteration,), dtype=torch.float32, device=device)

    done_img = 0
    done_batch = 0
    tq_iter = tqdm_(total=total_iteration, desc=f">> {mode} ({epc})")
    for data in loader:
        data[1:] = [e.to(device) for e in data[1:]]
        filenames, image, target = data[:3]
        labels = data[3:3 + len(loss_fns)]
        bounds = data[3 + len(loss_fns):]
        B = len(image)

        if optimizer:
            optimizer.zero_grad()
        pred_logits = net(image)
        pred_probs = F.softmax(pred_logits, dim=1)
        predicted_mask = probs2one_hot(pred_probs.detach())

        losses = [w * fn(pred_probs, label, bound)
                  for fn, label, w, bound in zip(loss_fns, labels, loss_weights, bounds)]
        loss = reduce(add, losses)
        if optimizer:
            loss.backward()
            optimizer.step()

        loss_log[done_batch] = loss.detach()
        all_dices[done_img:done_img + B, ...] = dice_coef(predicted_mask, target.detach())

        done_img += B
        done_batch += 1
        tq_iter.set_postfix({"DSC": f"{all_dices[:done_img, -1].mean():.3f}",
                             "loss": f"{loss_log[:done_batch].mean():.3f}"})
        tq_iter.update(1)
    tq_iter.close()
    return loss_log, all_dices


def run(args, net, optimizer, device, train_loader, val_loader, loss_fns, loss_weights):
    n_epoch, C = args.n_epoch, args.n_class
    metrics = {"tra_loss": torch.zeros((n_epoch, len(train_loader)), device=device),
               "tra_dice": torch.zeros((n_epoch, len(train_loader.dataset), C), device=device),
               "val_loss": torch.zeros((n_epoch, len(val_loader)), device=device),
               "val_dice": torch.zeros((n_epoch, len(val_loader.dataset), C), device=device)}
    best_dice = 0.0
    for i in range(n_epoch):
        tra_loss, tra_dice = do_epoch("train", net, device, train_loader, i,
                                      loss_fns, loss_weights, C, optimizer=optimizer)
        with torch.no_grad():
            val_loss, val_dice = do_epoch("val", net, device, val_loader, i, loss_fns, loss_weights, C)

        metrics["tra_loss"][i] = tra_loss
        metrics["tra_dice"][i] = tra_dice
        metrics["val_loss"][i] = val_loss
        metrics["val_dice"][i] = val_dice

        current_dice = val_dice[:, -1].mean().item()
        if current_dice > best_dice:
            best_dice = current_dice
            torch.save(net.state_dict(), f"{args.workdir}/best.pkl")
        print(f">> epoch {i}: train loss {tra_loss.mean().item():.4f}, val DSC {current_dice:.3f}")
    return metrics
