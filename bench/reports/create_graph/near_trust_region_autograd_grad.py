# Source: https://github.com/pytorch/pytorch/issues/78622
# Report: Minimizing Rosenbrock/Branin with the torch-trust-ncg TrustRegion optimizer triggered the "backward() with create_graph=True ... can cause a memory leak" warning; the reporter pointed at the create_graph backward as the leak source and suggested switching to autograd.
# Shape: the same second-order loop written the way the warning recommends: the differentiable gradient comes from torch.autograd.grad(..., create_graph=True) instead of backward(), so no .grad field ever holds a graph and each iteration's graph is released when the locals are rebound.
# Expect: near-miss: must be silent
import torch


def rosenbrock(x):
    return ((1 - x[:-1]) ** 2 + 100.0 * (x[1:] - x[:-1] ** 2) ** 2).sum()


def conjugate_gradient(hvp, b, iters=20, tol=1e-12):
    x = torch.zeros_like(b)
    r, p = b.clone(), b.clone()
    rs = r.dot(r)
    for _ in range(iters):
        Ap = hvp(p)
        curvature = p.dot(Ap)
        if curvature <= 0:  # negative curvature: stop (truncated CG)
            return x if x.abs().sum() > 0 else b
        alpha = rs / curvature
        x += alpha * p
        r -= alpha * Ap
        rs_new = r.dot(r)
        if rs_new < tol:
            break
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x


def newton_cg_minimize(fn, x0, max_iter=200, cg_iters=20, gtol=1e-8, radius=0.5,
                       device="cuda"):
    x = x0.detach().clone().to(device).requires_grad_(True)
    for it in range(max_iter):
        f = fn(x)
        (g,) = torch.autograd.grad(f, x, create_graph=True)

        def hvp(v):
            (hv,) = torch.autograd.grad(g, x, grad_outputs=v, retain_graph=True)
            return hv.detach()

        step = conjugate_gradient(hvp, -g.detach(), cg_iters)
        step = step * min(1.0, radius / (step.norm().item() + 1e-12))
        with torch.no_grad():
            x += step
        if g.detach().norm() < gtol:
            break
    return x.detach(), f.item(), it
