# Source: https://github.com/Cranial-XIX/CAGrad/blob/main/nyuv2/utils.py
# Report: one edit from CAGrad's trainer: the per-step objective kept for the trace is the summed loss tensor instead of a float, while every task backward (the last one too) passes retain_graph=True
# Shape: the final backward retains the whole SegNet graph and obj_trace (bound before the epoch loop) keeps a graph-attached sum of the task losses, so every batch's activations stay alive
# Expect: TML006 line 63; TML001 line 70
import numpy as np
import torch
import torch.nn.functional as F


def task_loss(pred, target, kind):
    if kind == "semantic":
        return F.nll_loss(pred, target, ignore_index=-1)
    mask = (target.sum(dim=1, keepdim=True) != 0).float()
    if kind == "depth":
        return (torch.abs(pred - target) * mask).sum() / mask.sum().clamp(min=1)
    return 1 - (pred * target * mask).sum() / mask.sum().clamp(min=1)


def copy_shared_grads(model, grads, grad_dims, task):
    grads[:, task].fill_(0.0)
    offset = 0
    for p, n in zip(model.shared_parameters(), grad_dims):
        if p.grad is not None:
            grads[offset:offset + n, task].copy_(p.grad.detach().view(-1))
        offset += n


def write_shared_grads(model, new_grad, grad_dims):
    offset = 0
    for p, n in zip(model.shared_parameters(), grad_dims):
        p.grad = new_grad[offset:offset + n].view_as(p).clone()
        offset += n


def conflict_averse(grads, alpha=0.5):
    gg = grads.t().mm(grads)
    g0_norm = (gg.mean() + 1e-8).sqrt()
    w = torch.softmax(-gg.sum(1), dim=0)
    gw = (grads * w.view(1, -1)).sum(1)
    lmbda = alpha * g0_norm / (gw.norm() + 1e-8)
    return (grads.mean(1) + lmbda * gw) / (1 + alpha ** 2)


def mtl_cagrad_trainer(train_loader, model, device, optimizer, scheduler, total_epoch=200, alpha=0.5):
    grad_dims = [p.numel() for p in model.shared_parameters()]
    grads = torch.zeros(sum(grad_dims), 3, device=device)
    obj_trace = []
    for epoch in range(total_epoch):
        model.train()
        epoch_cost = np.zeros(3, dtype=np.float32)
        for image, label, depth, normal in train_loader:
            image, label = image.to(device), label.long().to(device)
            depth, normal = depth.to(device), normal.to(device)

            train_pred, logsigma = model(image)
            train_loss = [task_loss(train_pred[0], label, "semantic"),
                          task_loss(train_pred[1], depth, "depth"),
                          task_loss(train_pred[2], normal, "normal")]
            train_loss_tmp = [train_loss[i] for i in range(3)]

            optimizer.zero_grad()
            for i in range(3):
                train_loss_tmp[i].backward(retain_graph=True)  # expect: TML006
                copy_shared_grads(model, grads, grad_dims, i)
                model.zero_grad_shared_modules()
            g = conflict_averse(grads, alpha)
            write_shared_grads(model, g * 3, grad_dims)
            optimizer.step()

            obj_trace.append(train_loss_tmp[0] + train_loss_tmp[1] + train_loss_tmp[2])  # expect: TML001
            for i in range(3):
                epoch_cost[i] += train_loss[i].item() / len(train_loader)
        scheduler.step()
        print(f"epoch {epoch}: {epoch_cost}")
    return obj_trace
