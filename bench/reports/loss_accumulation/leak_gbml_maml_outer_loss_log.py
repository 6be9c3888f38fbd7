# Source: https://github.com/sungyubkim/GBML/blob/09437ed2e6742e398d1ef6e71b0667c39aa2e1da/gbml/maml.py
# Report: GBML's second-order MAML (higher) averages each task's query loss into loss_log with .item(); here the .item() is dropped (realistic one-edit mistake).
# Shape: the .item() was dropped: loss_log, bound before the task loop, sums each task's query loss tensor, chaining every task's unrolled inner-loop graph into one value returned to the caller.
# Expect: TML001 line 53
import higher
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def accuracy(logits, targets):
    _, pred = torch.max(logits, dim=-1)
    return torch.mean(pred.eq(targets).float())


def average_grads(grad_list):
    mixed = []
    for per_param in zip(*grad_list):
        mixed.append(torch.stack(per_param).mean(dim=0))
    return mixed


class MetaLearner:
    def __init__(self, network, n_inner=5, inner_lr=1e-2, outer_lr=1e-3, tasks_per_batch=4):
        self.network = network.cuda()
        self.n_inner = n_inner
        self.inner_lr = inner_lr
        self.tasks_per_batch = tasks_per_batch
        self.outer_optimizer = torch.optim.Adam(self.network.parameters(), lr=outer_lr)

    @torch.enable_grad()
    def adapt_step(self, fmodel, diffopt, x, y):
        inner_loss = F.cross_entropy(fmodel(x), y)
        diffopt.step(inner_loss)

    def outer_loop(self, batch, is_train):
        self.network.zero_grad()
        sx, sy = [t.cuda() for t in batch["train"]]
        qx, qy = [t.cuda() for t in batch["test"]]

        loss_log = 0
        acc_log = 0
        grad_list = []
        loss_list = []
        for xs, ys, xq, yq in zip(sx, sy, qx, qy):
            inner_opt = torch.optim.SGD(self.network.parameters(), lr=self.inner_lr)
            with higher.innerloop_ctx(self.network, inner_opt, track_higher_grads=is_train) as (fmodel, diffopt):
                for _ in range(self.n_inner):
                    self.adapt_step(fmodel, diffopt, xs, ys)
                query_logit = fmodel(xq)
                outer_loss = F.cross_entropy(query_logit, yq)
                loss_log += outer_loss / self.tasks_per_batch  # expect: TML001
                with torch.no_grad():
                    acc_log += accuracy(query_logit, yq).item() / self.tasks_per_batch
                if is_train:
                    outer_grad = torch.autograd.grad(outer_loss, fmodel.parameters(time=0))
                    grad_list.append(outer_grad)
                    loss_list.append(outer_loss.item())

        if is_train:
            for p, g in zip(self.network.parameters(), average_grads(grad_list)):
                p.grad = g
            self.outer_optimizer.step()
        return loss_log, acc_log


def train(learner, loader, num_batches):
    loss_list, acc_list = [], []
    for batch_idx, batch in enumerate(loader):
        loss_log, acc_log = learner.outer_loop(batch, is_train=True)
        loss_list.append(float(loss_log))
        acc_list.append(acc_log)
        if batch_idx >= num_batches:
            break
    return np.mean(loss_list), np.mean(acc_list)
