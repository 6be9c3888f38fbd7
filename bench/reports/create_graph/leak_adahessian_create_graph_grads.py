# Source: https://github.com/amirgholami/adahessian/blob/5c176cdcbeacff1d9edfc77062d0bc7594f326a9/image_classification/main.py
# Report: one edit away from the real code: the per-step optimizer.zero_grad() is moved to the start of each epoch ("Adahessian resets its own state")
# Shape: with create_graph=True each backward accumulates out of place into .grad, so every step's grad carries the previous steps' double-backward graphs (and activations); the param <-> grad cycle is never broken
# Expect: TML013 line 89; TML002 line 95
import math

import numpy as np
import torch
import torch.nn as nn
from tqdm import tqdm


class Adahessian(torch.optim.Optimizer):
    def __init__(self, params, lr=0.15, betas=(0.9, 0.999), eps=1e-4, weight_decay=0.0, hessian_power=1.0):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, hessian_power=hessian_power))

    def get_trace(self, params, grads):
        for g in grads:
            if g.grad_fn is None:
                raise RuntimeError("call loss.backward(create_graph=True) before step()")
        v = [2 * torch.randint_like(p, high=2) - 1 for p in params]
        hvs = torch.autograd.grad(grads, params, grad_outputs=v, only_inputs=True, retain_graph=True)
        out = []
        for hv in hvs:
            if hv.dim() <= 2:
                out.append(hv.abs())
            else:
                out.append(torch.mean(hv.abs(), dim=[2, 3], keepdim=True))
        return out

    def step(self, gradsH):
        params = [p for g in self.param_groups for p in g["params"] if p.grad is not None]
        groups = [g for g in self.param_groups for p in g["params"] if p.grad is not None]
        hut_traces = self.get_trace(params, gradsH)
        for p, group, grad, hut in zip(params, groups, gradsH, hut_traces):
            state = self.state[p]
            if len(state) == 0:
                state["step"] = 0
                state["exp_avg"] = torch.zeros_like(p.data)
                state["exp_hessian_diag_sq"] = torch.zeros_like(p.data)
            exp_avg, exp_h = state["exp_avg"], state["exp_hessian_diag_sq"]
            beta1, beta2 = group["betas"]
            state["step"] += 1
            exp_avg.mul_(beta1).add_(grad.detach(), alpha=1 - beta1)
            exp_h.mul_(beta2).addcmul_(hut, hut, value=1 - beta2)
            bc1 = 1 - beta1 ** state["step"]
            bc2 = 1 - beta2 ** state["step"]
            denom = (exp_h.sqrt() ** group["hessian_power"]) / math.sqrt(bc2) ** group["hessian_power"] + group["eps"]
            p.data = p.data - group["lr"] * (exp_avg / bc1 / denom + group["weight_decay"] * p.data)


def get_params_grad(model):
    params, grads = [], []
    for param in model.parameters():
        if not param.requires_grad:
            continue
        params.append(param)
        grads.append(0.0 if param.grad is None else param.grad + 0.0)
    return params, grads


def test(model, test_loader):
    model.eval()
    correct, total_num = 0, 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.cuda(), target.cuda()
            output = model(data)
            pred = output.data.max(1, keepdim=True)[1]
            correct += pred.eq(target.data.view_as(pred)).cpu().sum().item()
            total_num += len(data)
    return correct / total_num


def train(model, train_loader, test_loader, epochs, lr=0.15, weight_decay=5e-4):
    criterion = nn.CrossEntropyLoss()
    optimizer = Adahessian(model.parameters(), lr=lr, weight_decay=weight_decay / lr)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, [80, 120], gamma=0.1)
    best_acc = 0.0
    for epoch in range(1, epochs + 1):
        train_loss, total_num, correct = 0.0, 0, 0
        model.train()
        optimizer.zero_grad()
        with tqdm(total=len(train_loader.dataset)) as progressbar:
            for batch_idx, (data, target) in enumerate(train_loader):
                data, target = data.cuda(), target.cuda()
                output = model(data)
                loss = criterion(output, target)
                loss.backward(create_graph=True)  # expect: TML013
                train_loss += loss.item() * target.size(0)
                total_num += target.size(0)
                _, predicted = output.max(1)
                correct += predicted.eq(target).sum().item()
                _, gradsH = get_params_grad(model)
                optimizer.step(gradsH)  # expect: TML002
                progressbar.update(target.size(0))
        scheduler.step()
        acc = test(model, test_loader)
        print(f"epoch {epoch}: train loss {np.around(train_loss / total_num, 2)}  test acc {np.around(acc * 100, 2)}")
        if acc > best_acc:
            best_acc = acc
            torch.save({"epoch": epoch, "model": model.state_dict(), "best_accuracy": best_acc}, "checkpoint/netbest.pkl")
    return best_acc
