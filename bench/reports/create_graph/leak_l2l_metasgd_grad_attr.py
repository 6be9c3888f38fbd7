# Source: https://github.com/learnables/learn2learn/issues/284
# Report: MAML/MetaSGD examples run out of CUDA memory after a few dozen iterations; fixed in PR #307 by clearing p.grad/p._lr (and p.update) right after the functional update in meta_sgd_update/update_module.
# Shape: adapt() takes second-order gradients (create_graph) and meta_sgd_update parks each one in p.grad of the cloned parameter it was computed from: parameter -> .grad -> double-backward graph -> parameter is a cycle that refcounting never frees, so every task's adaptation graph survives the outer backward.
# Expect: TML013 line 28
import copy

import numpy as np
import torch
import torch.nn as nn
from torch.autograd import grad


def clone_module(module):
    clone = copy.copy(module)
    clone._parameters = {k: (p.clone() if p is not None else None) for k, p in module._parameters.items()}
    clone._buffers = dict(module._buffers)
    clone._modules = {k: clone_module(m) for k, m in module._modules.items()}
    return clone


def clone_parameters(params):
    return [p.clone() for p in params]


def meta_sgd_update(model, lrs=None, grads=None):
    if grads is not None and lrs is not None:
        for p, lr, g in zip(model.parameters(), lrs, grads):
            p.grad = g  # expect: TML013
            p._lr = lr
    for key in model._parameters:
        p = model._parameters[key]
        if p is not None and p.grad is not None:
            model._parameters[key] = p - p._lr * p.grad
    for key in model._modules:
        model._modules[key] = meta_sgd_update(model._modules[key])
    return model


class MetaSGD(nn.Module):
    def __init__(self, model, lr=1.0, first_order=False, lrs=None):
        super().__init__()
        self.module = model
        if lrs is None:
            lrs = nn.ParameterList([nn.Parameter(torch.ones_like(p) * lr) for p in model.parameters()])
        self.lrs = lrs
        self.first_order = first_order

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def clone(self):
        return MetaSGD(clone_module(self.module), lrs=clone_parameters(self.lrs), first_order=self.first_order)

    def adapt(self, loss):
        second_order = not self.first_order
        gradients = grad(loss, self.module.parameters(), retain_graph=second_order, create_graph=second_order)
        self.module = meta_sgd_update(self.module, self.lrs, gradients)


def accuracy(predictions, targets):
    return (predictions.argmax(dim=1).view(targets.shape) == targets).float().mean()


def fast_adapt(batch, learner, loss, adaptation_steps, shots, ways, device):
    data, labels = (t.to(device) for t in batch)
    adapt_idx = np.zeros(data.size(0), dtype=bool)
    adapt_idx[np.arange(shots * ways) * 2] = True
    eval_idx = torch.from_numpy(~adapt_idx)
    adapt_idx = torch.from_numpy(adapt_idx)
    for _ in range(adaptation_steps):
        learner.adapt(loss(learner(data[adapt_idx]), labels[adapt_idx]))
    predictions = learner(data[eval_idx])
    return loss(predictions, labels[eval_idx]), accuracy(predictions, labels[eval_idx])


def main(model, train_tasks, ways=5, shots=1, meta_bsz=32, iters=60000, adapt_steps=1, device="cuda"):
    meta = MetaSGD(model.to(device), lr=0.5)
    opt = torch.optim.Adam(meta.parameters(), lr=0.003)
    loss = nn.CrossEntropyLoss()
    for iteration in range(iters):
        opt.zero_grad()
        meta_train_error, meta_train_accuracy = 0.0, 0.0
        for task in range(meta_bsz):
            learner = meta.clone()
            error, acc = fast_adapt(train_tasks.sample(), learner, loss, adapt_steps, shots, ways, device)
            error.backward()
            meta_train_error += error.item()
            meta_train_accuracy += acc.item()
        for p in meta.parameters():
            p.grad.data.mul_(1.0 / meta_bsz)
        opt.step()
        print(iteration, meta_train_error / meta_bsz, meta_train_accuracy / meta_bsz)
