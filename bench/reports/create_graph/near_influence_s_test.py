# Source: https://github.com/nimarb/pytorch_influence_functions/issues/15
# Report: s_test runs out of GPU memory within a few recursions; the reporter's fix wraps the h_estimate update so it stops tracking grad
# Shape: the recursive update of h_estimate runs under torch.no_grad(), so each step's hvp graph dies with the iteration and the estimate carries no history
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from torch.autograd import grad


def calc_loss(logits, target):
    logp = F.log_softmax(logits, dim=1)
    return F.nll_loss(logp, target, reduction="mean")


def grad_z(z, t, model, gpu=-1):
    model.eval()
    if gpu >= 0:
        z, t = z.cuda(), t.cuda()
    loss = calc_loss(model(z), t)
    params = [p for p in model.parameters() if p.requires_grad]
    return list(grad(loss, params, create_graph=True))


def hvp(y, w, v):
    if len(w) != len(v):
        raise ValueError("w and v must have the same length.")
    first_grads = grad(y, w, retain_graph=True, create_graph=True)
    dot = 0
    for g_elem, v_elem in zip(first_grads, v):
        dot += torch.sum(g_elem * v_elem)
    return grad(dot, w, create_graph=True)


def display_progress(text, i, total):
    if i % 100 == 0:
        print(f"{text} {i}/{total}")


def s_test(z_test, t_test, model, z_loader, gpu=-1, damp=0.01, scale=25.0,
           recursion_depth=5000):
    """Stochastic estimate of the inverse-Hessian-vector product."""
    v = grad_z(z_test, t_test, model, gpu)
    h_estimate = v.copy()

    for i in range(recursion_depth):
        for x, t in z_loader:
            if gpu >= 0:
                x, t = x.cuda(), t.cuda()
            loss = calc_loss(model(x), t)
            params = [p for p in model.parameters() if p.requires_grad]
            hv = hvp(loss, params, h_estimate)
            with torch.no_grad():
                h_estimate = [
                    _v + (1 - damp) * _h - _hv / scale
                    for _v, _h, _hv in zip(v, h_estimate, hv)]
            break
        display_progress("Calc. s_test recursions:", i, recursion_depth)
    return h_estimate
