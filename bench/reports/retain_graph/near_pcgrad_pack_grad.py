# Source: https://github.com/WeiChengTseng/Pytorch-PCGrad/issues/2
# Report: PCGrad optimizer wrapper on a 5-subnetwork x 3-task model (15 losses) ran CUDA out of memory; the reporter traced it to retain_graph=True in the per-task backward.
# Shape: close variant: _pack_grad retains the shared graph only for the tasks still to come; the last task's backward frees it.
# Expect: near-miss: must be silent
import random

import torch


class PCGrad:
    def __init__(self, optimizer):
        self._optim = optimizer

    def zero_grad(self):
        return self._optim.zero_grad(set_to_none=True)

    def step(self):
        return self._optim.step()

    def pc_backward(self, objectives):
        grads, has_grads = self._pack_grad(objectives)
        self._set_grad(self._project_conflicting(grads, has_grads))

    def _pack_grad(self, objectives):
        grads, has_grads = [], []
        last = len(objectives) - 1
        for i, obj in enumerate(objectives):
            self._optim.zero_grad(set_to_none=True)
            obj.backward(retain_graph=i < last)
            grad, has_grad = self._retrieve_grad()
            grads.append(grad)
            has_grads.append(has_grad)
        return grads, has_grads

    def _retrieve_grad(self):
        grad, has_grad = [], []
        for group in self._optim.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    grad.append(torch.zeros_like(p).flatten())
                    has_grad.append(torch.zeros_like(p).flatten())
                else:
                    grad.append(p.grad.clone().flatten())
                    has_grad.append(torch.ones_like(p).flatten())
        return torch.cat(grad), torch.cat(has_grad)

    def _project_conflicting(self, grads, has_grads):
        shared = torch.stack(has_grads).prod(0).bool()
        pc_grad = [g.clone() for g in grads]
        for g_i in pc_grad:
            random.shuffle(grads)
            for g_j in grads:
                dot = torch.dot(g_i, g_j)
                if dot < 0:
                    g_i -= dot * g_j / (g_j.norm() ** 2)
        merged = torch.zeros_like(grads[0])
        merged[shared] = torch.stack([g[shared] for g in pc_grad]).mean(dim=0)
        merged[~shared] = torch.stack([g[~shared] for g in pc_grad]).sum(dim=0)
        return merged

    def _set_grad(self, flat_grad):
        idx = 0
        for group in self._optim.param_groups:
            for p in group["params"]:
                n = p.numel()
                p.grad = flat_grad[idx: idx + n].view_as(p).clone()
                idx += n


def train_epoch(model, loader, criteria, pc_adam, device):
    model.train()
    for inputs, targets in loader:
        inputs = [x.to(device) for x in inputs]
        outputs = model(*inputs)  # {net_idx: {task: logits}}
        losses = [criteria[task](out, targets[task].to(device))
                  for net_out in outputs.values() for task, out in net_out.items()]
        pc_adam.zero_grad()
        pc_adam.pc_backward(losses)
        pc_adam.step()
