# Source: https://github.com/rlworkgroup/garage/issues/2342
# Report: TRPO (PyTorch) in garage runs out of CUDA memory after some epochs; reporter suspects the Hessian-vector product of the policy optimization step (source note: code: https://github.com/rlworkgroup/garage/blob/02d6ef750b8b14c103f4f74c5d7ecd99274d80b0/src/garage/torch/optimizers/conjugate_gradient_optimizer.py)
# Shape: the CG optimizer's Hessian-vector product as garage writes it: first-order KL gradients from torch.autograd.grad(create_graph=True), nothing stored in p.grad, so no parameter/grad cycle
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch.optim import Optimizer


def unflatten_tensors(flat, shapes):
    sizes = [int(np.prod(s)) for s in shapes]
    chunks = torch.split(flat, sizes)
    return [c.reshape(s) for c, s in zip(chunks, shapes)]


def _build_hessian_vector_product(func, params, reg_coeff=1e-5):
    """Pearlmutter HVP: returns a closure computing H @ v for the KL constraint."""
    param_shapes = [p.shape or torch.Size([1]) for p in params]

    def _eval(vector):
        """Evaluate the product of the Hessian of func with vector.

        Args:
            vector (torch.Tensor): flat vector to multiply.

        Returns:
            torch.Tensor: flat Hessian-vector product.

        Note: the KL gradient is returned by autograd.grad, never put in .grad.
        """
        f = func()
        f_grads = torch.autograd.grad(f, params, create_graph=True)

        unflatten_vector = unflatten_tensors(vector, param_shapes)
        grad_vector_product = torch.sum(
            torch.stack([torch.sum(g * x) for g, x in zip(f_grads, unflatten_vector)]))

        hvp = list(torch.autograd.grad(grad_vector_product, params, allow_unused=True))
        for i, (hx, p) in enumerate(zip(hvp, params)):
            if hx is None:
                hvp[i] = torch.zeros_like(p)
        flat_output = torch.cat([h.reshape(-1) for h in hvp])
        return flat_output + reg_coeff * vector

    return _eval


def _conjugate_gradient(f_Ax, b, cg_iters, residual_tol=1e-10):
    p = b.clone()
    r = b.clone()
    x = torch.zeros_like(b)
    rdotr = torch.dot(r, r)
    for _ in range(cg_iters):
        z = f_Ax(p)
        v = rdotr / torch.dot(p, z)
        x += v * p
        r -= v * z
        newrdotr = torch.dot(r, r)
        p = r + (newrdotr / rdotr) * p
        rdotr = newrdotr
        if rdotr < residual_tol:
            break
    return x


class ConjugateGradientOptimizer(Optimizer):
    def __init__(self, params, max_constraint_value, cg_iters=10, hvp_reg_coeff=1e-5):
        super().__init__(params, {})
        self._cg_iters = cg_iters
        self._max_constraint_value = max_constraint_value
        self._hvp_reg_coeff = hvp_reg_coeff

    def step(self, f_loss, f_constraint):
        params, grads = [], []
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is not None:
                    params.append(p)
                    grads.append(p.grad.reshape(-1).clone())
        flat_loss_grads = torch.cat(grads)
        f_Ax = _build_hessian_vector_product(f_constraint, params, self._hvp_reg_coeff)
        step_dir = _conjugate_gradient(f_Ax, flat_loss_grads, self._cg_iters)
        step_size = np.sqrt(2.0 * self._max_constraint_value /
                            (torch.dot(step_dir, f_Ax(step_dir)).item() + 1e-8))
        with torch.no_grad():
            offset = 0
            for p in params:
                n = p.numel()
                p.sub_(step_size * step_dir[offset:offset + n].view_as(p))
                offset += n
