# Source: https://github.com/axeldinh/HelmhotzProject/blob/0cd33e3c09da15fdf947ecb37ee95077b4d8bc0c/src/train.py
# Report: audited repository code: the VPINN training loop for the Helmholtz equation calls loss.backward(retain_graph=True) every iteration and keeps the graph-attached loss as last_loss for the convergence test, so the previous iteration's whole graph (second-derivative residual, with its saved tensors retained) stays alive through the next forward and backward
# Shape: near-miss: the same VPINN loop with the graph released: plain loss.backward() (no retain_graph) and last_loss kept as loss.detach() for the convergence test; the gradient history (cpu copies) and the create_graph=True derivatives inside compute_loss are unchanged
# Expect: near-miss: must be silent
from collections import defaultdict

import torch
from tqdm import tqdm


class VPINN:
    def __init__(self, model, x_interior, x_boundary, u_boundary, test_functions, k):
        self.model = model
        self.x_interior = x_interior.requires_grad_(True)
        self.x_boundary = x_boundary
        self.u_boundary = u_boundary
        self.test_functions = test_functions  # (n_test, n_quad) values at quadrature nodes
        self.k = k
        self.grad_parameters = defaultdict(list)

    def compute_loss(self, method=1):
        u = self.model(self.x_interior)
        du = torch.autograd.grad(u.sum(), self.x_interior, create_graph=True)[0]
        if method == 1:
            d2u = torch.autograd.grad(du.sum(), self.x_interior, create_graph=True)[0]
            residual = -d2u - self.k ** 2 * u
            loss_interior = ((self.test_functions @ residual) ** 2).mean()
        else:
            loss_interior = ((self.test_functions @ (du - self.k ** 2 * u)) ** 2).mean()
        u_b = self.model(self.x_boundary)
        loss_boundary = ((u_b - self.u_boundary) ** 2).mean()
        return loss_interior, loss_boundary


def train(model, optimizer, num_iter, method=1, tol=1e-10):
    t = tqdm(range(num_iter))
    last_loss = 0
    for iter_ in t:
        if optimizer is not None:
            optimizer.zero_grad()
        loss_interior, loss_boundary = model.compute_loss(method)
        loss = loss_interior + loss_boundary
        loss.backward()
        for n, p in model.model.named_parameters():
            model.grad_parameters[n].append(p.grad.detach().cpu().clone())
        if optimizer is not None:
            optimizer.step()
        t.set_description("Loss Interior = {:e}, Loss Boundary = {:e}".format(
            loss_interior.item(), loss_boundary.item()))
        if torch.abs(last_loss - loss) < tol:
            break
        last_loss = loss.detach()
    print("Training Over")
