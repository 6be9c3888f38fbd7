# Source: https://github.com/jik0730/Meta-SGD-pytorch/blob/master/train.py
# Report: Meta-SGD's inner adaptation takes second-order gradients with torch.autograd.grad(create_graph=True) and builds adapted weights functionally; a comment keeps the loss.backward(create_graph=True) alternative disabled
# Shape: the create_graph gradients are returned as a tuple and consumed into adapted_params, never written into p.grad, so no parameter/.grad cycle forms; meta_loss = 0; meta_loss += loss_t is intended accumulation for one meta-backward
# Expect: near-miss: must be silent
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F


class MetaLearner(nn.Module):
    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 64, 3, padding=1)
        self.conv2 = nn.Conv2d(64, 64, 3, padding=1)
        self.fc = nn.Linear(64, num_classes)
        self.task_lr = OrderedDict()

    def define_task_lr_params(self, init_lr=1e-3):
        for key, val in self.named_parameters():
            self.task_lr[key] = nn.Parameter(init_lr * torch.ones_like(val))

    def cloned_state_dict(self):
        return {key: val.clone() for key, val in self.state_dict().items()}

    def forward(self, x, params=None):
        p = params if params is not None else dict(self.named_parameters())
        x = F.max_pool2d(F.relu(F.conv2d(x, p["conv1.weight"], p["conv1.bias"], padding=1)), 2)
        x = F.max_pool2d(F.relu(F.conv2d(x, p["conv2.weight"], p["conv2.bias"], padding=1)), 2)
        x = x.mean(dim=(2, 3))
        return F.log_softmax(F.linear(x, p["fc.weight"], p["fc.bias"]), dim=1)


def zero_grad(params):
    for p in params:
        if p.grad is not None:
            p.grad.zero_()


def train_single_task(model, loss_fn, task, device):
    model.train()
    X_sup, Y_sup = task.support()
    X_sup, Y_sup = X_sup.to(device), Y_sup.to(device)
    loss = loss_fn(model(X_sup), Y_sup)

    # NOTE for approx-MAML set create_graph=False
    zero_grad(model.parameters())
    grads = torch.autograd.grad(loss, model.parameters(), create_graph=True)

    adapted_state_dict = model.cloned_state_dict()
    for (key, val), grad in zip(model.named_parameters(), grads):
        adapted_state_dict[key] = val - model.task_lr[key] * grad
    return adapted_state_dict


def train_meta(model, sample_task, meta_optimizer, num_episodes, num_inner_tasks, device="cuda"):
    loss_fn = nn.NLLLoss()
    for episode in range(num_episodes):
        adapted_state_dicts, tasks = [], []
        for _ in range(num_inner_tasks):
            task = sample_task()
            adapted_state_dicts.append(train_single_task(model, loss_fn, task, device))
            tasks.append(task)

        meta_loss = 0
        for a_dict, task in zip(adapted_state_dicts, tasks):
            X_meta, Y_meta = task.query()
            X_meta, Y_meta = X_meta.to(device), Y_meta.to(device)
            loss_t = loss_fn(model(X_meta, a_dict), Y_meta)
            meta_loss += loss_t
        meta_loss /= float(num_inner_tasks)

        meta_optimizer.zero_grad()
        meta_loss.backward()
        meta_optimizer.step()
        if episode % 100 == 0:
            print(episode, meta_loss.item())
