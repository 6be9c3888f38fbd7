# Source: https://github.com/deepinv/deepinv/issues/301
# Report: plug-and-play phase-retrieval solver: memory explodes over iterations because each denoiser step builds on the previous iterate's graph
# Shape: the fix (PR #302): forward runs the fixed-point loop under torch.no_grad(), so each iterate carries no graph
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class DataFidelityL2:
    def grad(self, x, y, physics):
        residual = physics.A(x) - y
        return physics.A_adjoint(residual)


class PnPSolver(nn.Module):
    def __init__(self, denoiser, stepsize=1.0, sigma=0.05, max_iter=200, tol=1e-5):
        super().__init__()
        self.denoiser = denoiser
        self.fidelity = DataFidelityL2()
        self.stepsize = stepsize
        self.sigma = sigma
        self.max_iter = max_iter
        self.tol = tol

    def init_iterate(self, y, physics):
        return physics.A_adjoint(y)

    def check_convergence(self, x_prev, x):
        num = (x - x_prev).flatten(1).norm(dim=1)
        den = x_prev.flatten(1).norm(dim=1) + 1e-12
        return bool((num / den).max() < self.tol)

    def step(self, x, y, physics):
        z = x - self.stepsize * self.fidelity.grad(x, y, physics)
        return self.denoiser(z, self.sigma)

    def fixed_point(self, y, physics, x_gt=None):
        x = self.init_iterate(y, physics)
        history = {"psnr": []}
        for it in range(self.max_iter):
            x_prev = x
            x = self.step(x_prev, y, physics)
            if x_gt is not None:
                mse = (x - x_gt).pow(2).mean().item()
                history["psnr"].append(-10.0 * torch.log10(torch.tensor(mse)).item())
            if self.check_convergence(x_prev, x):
                break
        return x, history

    def forward(self, y, physics, x_gt=None, compute_metrics=False):
        with torch.no_grad():
            x, history = self.fixed_point(y, physics, x_gt=x_gt)
        if compute_metrics:
            return x, history
        return x


def reconstruct(solver, loader, physics, device="cuda"):
    outputs = []
    for y, x_gt in loader:
        y, x_gt = y.to(device), x_gt.to(device)
        x_hat, metrics = solver(y, physics, x_gt=x_gt, compute_metrics=True)
        outputs.append((x_hat.detach().cpu(), metrics["psnr"][-1]))
    return outputs
