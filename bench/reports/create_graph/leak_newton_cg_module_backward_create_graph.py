# Source: https://github.com/rfeinman/pytorch-minimize/issues/29
# Report: Iteratively optimizing PyTorch modules with pytorch-minimize's Hessian-based methods (newton-cg, dogleg) printed the "backward() with create_graph=True will create a reference cycle" warning and eventually hit torch.cuda.OutOfMemoryError.
# Shape: a Minimizer-style closure zeroes grads, then calls loss.backward(create_graph=True) and differentiates the gathered p.grad again for Hessian-vector products; after the last Newton iteration nothing sets p.grad back to None, so every fitted module stays pinned (with its double-backward graph) by the parameter<->grad cycle after the loop drops it.
# Expect: TML013 line 32
import torch
import torch.nn as nn
import torch.nn.functional as F


def conjugate_gradient(hvp, b, iters=10, tol=1e-10):
    x = torch.zeros_like(b)
    r, p = b.clone(), b.clone()
    rs = r.dot(r)
    for _ in range(iters):
        Ap = hvp(p)
        alpha = rs / p.dot(Ap)
        x += alpha * p
        r -= alpha * Ap
        rs_new = r.dot(r)
        if rs_new < tol:
            break
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x


def newton_cg_fit(model, X, y, max_iter=20, damping=1e-1):
    params = [p for p in model.parameters() if p.requires_grad]
    for _ in range(max_iter):
        model.zero_grad(set_to_none=True)
        loss = F.nll_loss(model(X), y)
        loss.backward(create_graph=True)  # expect: TML013
        flat_grad = torch.cat([p.grad.reshape(-1) for p in params])

        def hvp(v):
            hv = torch.autograd.grad(flat_grad, params, grad_outputs=v, retain_graph=True)
            return torch.cat([h.reshape(-1) for h in hv]).detach() + damping * v

        direction = conjugate_gradient(hvp, -flat_grad.detach())
        with torch.no_grad():
            torch.nn.utils.vector_to_parameters(
                torch.nn.utils.parameters_to_vector(params) + direction, params)
    return loss.item()


def fit_per_subject(subjects, device="cuda"):
    scores = {}
    for name, (X, y) in subjects.items():
        model = nn.Sequential(nn.Linear(X.shape[1], 50), nn.Tanh(),
                              nn.Linear(50, int(y.max()) + 1), nn.LogSoftmax(-1)).to(device)
        scores[name] = newton_cg_fit(model, X.to(device), y.to(device))
    return scores
