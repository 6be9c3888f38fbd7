# Source: https://github.com/facebookresearch/jacobian_regularizer/issues/1
# Report: the MNIST example's evaluation pass summed the supervised / Jacobian / total loss tensors (times batch size) into running averages, so every test batch's graph (with create_graph Jacobian terms) stayed alive until the end of the pass; fixed with .item()
# Shape: per-metric running sums bound before the loader loop are updated with `+= loss_tensor * n` inside a helper that must keep grad enabled (input Jacobian)
# Expect: TML001 line 41; TML001 line 42; TML001 line 43
import torch
import torch.nn as nn


class InputJacobianPenalty(nn.Module):
    """Frobenius norm of d(logits)/d(input), estimated with random projections."""

    def __init__(self, n_proj=1):
        super().__init__()
        self.n_proj = n_proj

    def forward(self, x, logits):
        batch, n_cls = logits.shape
        total = 0.0
        for _ in range(self.n_proj):
            v = torch.randn(batch, n_cls, device=logits.device)
            v = v / v.norm(dim=1, keepdim=True)
            (jv,) = torch.autograd.grad(logits, x, grad_outputs=v, create_graph=True)
            total = total + n_cls * jv.pow(2).sum() / (self.n_proj * batch)
        return 0.5 * total


def run_eval(device, model, loader, criterion, lam):
    # gradients w.r.t. the input are needed, so this cannot run under no_grad
    penalty = InputJacobianPenalty(n_proj=3)
    hits, seen = 0, 0
    sup_avg, jac_avg, tot_avg = 0.0, 0.0, 0.0
    for images, labels in loader:
        images = images.to(device).requires_grad_(True)
        labels = labels.to(device)
        logits = model(images)
        hits += (logits.argmax(1) == labels).sum().item()
        seen += labels.size(0)
        sup = criterion(logits, labels)
        jac = penalty(images, logits)
        total = sup + lam * jac
        sup_avg += sup * labels.size(0)  # expect: TML001
        jac_avg += jac * labels.size(0)  # expect: TML001
        tot_avg += total * labels.size(0)  # expect: TML001
    return {
        "acc": hits / seen,
        "sup": float(sup_avg / seen),
        "jac": float(jac_avg / seen),
        "total": float(tot_avg / seen),
    }
