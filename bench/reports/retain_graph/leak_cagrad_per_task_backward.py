# Source: https://github.com/AvivNavon/nash-mtl/issues/16
# Report: CAGrad meant to retain the graph for every task except the last, but the condition `i < n_tasks` is always true, so the last backward also retained the graph and training ran out of GPU memory
# Shape: a weight-method class backwards each task loss in turn inside get_weighted_loss; the guard is off by one, so every per-task backward (including the last) keeps the graph while the trainer still holds `losses`
# Expect: TML006 line 30
import numpy as np
import torch
from scipy.optimize import minimize


class CAGradWeighting:
    def __init__(self, n_tasks, device, c=0.4):
        self.n_tasks = n_tasks
        self.device = device
        self.c = c

    @staticmethod
    def grad2vec(shared_parameters, grads, grad_dims, task):
        grads[:, task].fill_(0.0)
        start = 0
        for p, size in zip(shared_parameters, grad_dims):
            if p.grad is not None:
                grads[start:start + size, task].copy_(p.grad.detach().view(-1))
            start += size

    def get_weighted_loss(self, losses, shared_parameters):
        grad_dims = [p.data.numel() for p in shared_parameters]
        grads = torch.zeros(sum(grad_dims), self.n_tasks, device=self.device)
        for i in range(self.n_tasks):
            if i < self.n_tasks:
                losses[i].backward(retain_graph=True)  # expect: TML006
            else:
                losses[i].backward()
            self.grad2vec(shared_parameters, grads, grad_dims, i)
            for p in shared_parameters:
                p.grad = None
        g = self.cagrad(grads)
        start = 0
        for p, size in zip(shared_parameters, grad_dims):
            p.grad = g[start:start + size].view_as(p).clone()
            start += size

    def cagrad(self, grads):
        GG = grads.t().mm(grads).cpu().numpy()
        g0_norm = np.sqrt(GG.mean() + 1e-8)
        x0 = np.ones(self.n_tasks) / self.n_tasks
        c = self.c * g0_norm + 1e-8
        obj = lambda x: x @ GG @ x0 + c * np.sqrt(x @ GG @ x + 1e-8)
        res = minimize(obj, x0, bounds=[(0, 1)] * self.n_tasks, constraints={"type": "eq", "fun": lambda x: 1 - x.sum()})
        ww = torch.as_tensor(res.x, dtype=grads.dtype, device=grads.device)
        gw = (grads * ww.view(1, -1)).sum(1)
        lmbda = c / (gw.norm() + 1e-8)
        return (grads.mean(1) + lmbda * gw) / (1 + self.c ** 2)


def train_epoch(model, loader, optimizer, weight_method, device):
    for batch in loader:
        x, seg, depth, normal = (t.to(device) for t in batch)
        optimizer.zero_grad()
        seg_pred, depth_pred, normal_pred = model(x)
        losses = torch.stack((model.seg_loss(seg_pred, seg), model.depth_loss(depth_pred, depth), model.normal_loss(normal_pred, normal)))
        weight_method.get_weighted_loss(losses, list(model.shared_parameters()))
        optimizer.step()
        print(" ".join(f"{v:.4f}" for v in losses.detach().tolist()))
