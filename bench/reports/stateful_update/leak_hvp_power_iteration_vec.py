# Source: https://github.com/noahgolmant/pytorch-hessian-eigenthings/blob/master/hessian_eigenthings/power_iter.py
# Report: one edit from hessian-eigenthings' power iteration: the HVP is made differentiable (create_graph=True on the second grad) and the renormalised vector is no longer detached
# Shape: vec = new_vec / norm(new_vec) reads the previous vec through the HVP (grad_product = sum(grad_vec * vec)) and stays graph-attached, so each step's double-backward graph (and its batch's activations) chains onto the last
# Expect: TML005 line 60
import numpy as np
import torch


class HVPOperator:
    def __init__(self, model, dataloader, criterion, use_gpu=True):
        self.size = int(sum(p.numel() for p in model.parameters()))
        self.model = model.cuda() if use_gpu else model
        self.dataloader = dataloader
        self.dataloader_iter = iter(dataloader)
        self.criterion = criterion
        self.use_gpu = use_gpu

    def next_batch(self):
        try:
            return next(self.dataloader_iter)
        except StopIteration:
            self.dataloader_iter = iter(self.dataloader)
            return next(self.dataloader_iter)

    def prepare_grad(self):
        inputs, target = self.next_batch()
        if self.use_gpu:
            inputs, target = inputs.cuda(), target.cuda()
        loss = self.criterion(self.model(inputs), target)
        grads = torch.autograd.grad(loss, self.model.parameters(), create_graph=True)
        return torch.cat([g.contiguous().view(-1) for g in grads])

    def apply(self, vec):
        grad_vec = self.prepare_grad()
        grad_product = torch.sum(grad_vec * vec)
        grad_grad = torch.autograd.grad(grad_product, self.model.parameters(), create_graph=True)
        return torch.cat([g.contiguous().view(-1) for g in grad_grad])


class DeflatedOperator:
    def __init__(self, base, eigenval, eigenvec):
        self.base, self.val, self.vec, self.size = base, eigenval, eigenvec, base.size

    def apply(self, x):
        return self.base.apply(x) - self.val * self.vec.dot(x) * self.vec


def power_iteration(operator, steps=20, error_threshold=1e-4, momentum=0.0, use_gpu=True, init_vec=None):
    vec = torch.rand(operator.size) if init_vec is None else init_vec
    if use_gpu:
        vec = vec.cuda()
    prev_lambda = 0.0
    prev_vec = torch.zeros_like(vec)
    lambda_estimate = 0.0
    for _ in range(steps):
        new_vec = operator.apply(vec) - momentum * prev_vec
        prev_vec = vec / (torch.norm(vec) + 1e-6)
        lambda_estimate = vec.dot(new_vec).item()
        diff = lambda_estimate - prev_lambda
        vec = new_vec / torch.norm(new_vec)  # expect: TML005
        if np.abs(diff / lambda_estimate) < error_threshold:
            break
        prev_lambda = lambda_estimate
    return lambda_estimate, vec


def compute_hessian_eigenthings(model, dataloader, loss, num_eigenthings=10, power_iter_steps=20, use_gpu=True):
    current_op = HVPOperator(model, dataloader, loss, use_gpu=use_gpu)
    eigenvals, eigenvecs = [], []
    prev_vec = None
    for _ in range(num_eigenthings):
        eigenval, eigenvec = power_iteration(current_op, power_iter_steps, use_gpu=use_gpu, init_vec=prev_vec)
        current_op = DeflatedOperator(current_op, eigenval, eigenvec)
        prev_vec = eigenvec
        eigenvals.append(eigenval)
        eigenvecs.append(eigenvec.cpu().numpy())
    return np.array(eigenvals), np.array(eigenvecs)
