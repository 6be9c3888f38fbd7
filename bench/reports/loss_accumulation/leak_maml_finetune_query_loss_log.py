# Source: https://github.com/dragen1860/MAML-Pytorch/blob/98a00d41724c133bd29619a2fb2cc46dd128a368/meta.py
# Report: audit of Meta: forward() sums query losses of all tasks into a per-call list for one meta backward and wraps the logging-only losses in no_grad; finetunning() adapts a deepcopy per test task and keeps only .item() accuracies. The variant it avoided returns the attached query loss and the test loop logs it
# Shape: the meta-test loop appends each task's query loss, still attached through the fast weights to that task's deepcopied net, to a list kept for the whole evaluation
# Expect: TML001 line 84
from copy import deepcopy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Learner(nn.Module):
    def __init__(self, n_in, n_way, hidden=256):
        super().__init__()
        self.vars = nn.ParameterList([
            nn.Parameter(torch.randn(hidden, n_in) * 0.02), nn.Parameter(torch.zeros(hidden)),
            nn.Parameter(torch.randn(n_way, hidden) * 0.02), nn.Parameter(torch.zeros(n_way)),
        ])

    def forward(self, x, vars=None):
        w1, b1, w2, b2 = self.vars if vars is None else vars
        return F.linear(F.relu(F.linear(x.flatten(1), w1, b1)), w2, b2)


class Meta(nn.Module):
    def __init__(self, n_in, n_way, update_lr=0.4, meta_lr=1e-3, update_step=5, update_step_test=10):
        super().__init__()
        self.net = Learner(n_in, n_way)
        self.update_lr, self.update_step, self.update_step_test = update_lr, update_step, update_step_test
        self.meta_optim = torch.optim.Adam(self.net.parameters(), lr=meta_lr)

    def _inner(self, net, x, y, weights):
        grad = torch.autograd.grad(F.cross_entropy(net(x, weights), y), weights)
        return [w - self.update_lr * g for g, w in zip(grad, weights)]

    def forward(self, x_spt, y_spt, x_qry, y_qry):
        task_num = x_spt.size(0)
        losses_q = [0 for _ in range(self.update_step + 1)]
        corrects = [0 for _ in range(self.update_step + 1)]
        for i in range(task_num):
            fast = self._inner(self.net, x_spt[i], y_spt[i], list(self.net.parameters()))
            with torch.no_grad():
                logits_q = self.net(x_qry[i])
                losses_q[0] += F.cross_entropy(logits_q, y_qry[i])
                corrects[0] += (logits_q.argmax(1) == y_qry[i]).sum().item()
            for k in range(1, self.update_step + 1):
                logits_q = self.net(x_qry[i], fast)
                losses_q[k] += F.cross_entropy(logits_q, y_qry[i])
                corrects[k] += (logits_q.argmax(1) == y_qry[i]).sum().item()
                if k < self.update_step:
                    fast = self._inner(self.net, x_spt[i], y_spt[i], fast)
        meta_loss = losses_q[-1] / task_num
        self.meta_optim.zero_grad()
        meta_loss.backward()
        self.meta_optim.step()
        return np.array(corrects) / (x_qry.size(1) * task_num)

    def finetunning(self, x_spt, y_spt, x_qry, y_qry):
        net = deepcopy(self.net)
        fast = list(net.parameters())
        corrects = []
        for _ in range(self.update_step_test):
            fast = self._inner(net, x_spt, y_spt, fast)
            logits_q = net(x_qry, fast)
            loss_q = F.cross_entropy(logits_q, y_qry)
            with torch.no_grad():
                corrects.append((logits_q.argmax(1) == y_qry).sum().item())
        del net
        return np.array(corrects) / x_qry.size(0), loss_q


def main(db, steps=40000, device="cuda"):
    maml = Meta(n_in=28 * 28, n_way=5).to(device)
    for step in range(steps):
        batch = [torch.from_numpy(a).to(device) for a in db.next("train")]
        accs = maml(*batch)
        if step % 500 == 0:
            accs_all_test, test_losses = [], []
            for _ in range(1000 // 32):
                for one in zip(*[torch.from_numpy(a).to(device) for a in db.next("test")]):
                    accs, q_loss = maml.finetunning(*one)
                    accs_all_test.append(accs)
                    test_losses.append(q_loss)  # expect: TML001
            print(step, np.mean(accs_all_test, axis=0), sum(t.item() for t in test_losses) / len(test_losses))
