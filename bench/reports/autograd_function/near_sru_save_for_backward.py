# Source: https://github.com/asappresearch/sru/pull/171
# Report: SRU's custom op stored intermediate tensors such as the cell states directly on ctx instead of via save_for_backward, creating a potential memory leak; the PR moved them into save_for_backward.
# Shape: the fixed Function saves every tensor (inputs and intermediates) with ctx.save_for_backward and keeps only Python scalars on ctx.
# Expect: near-miss: must be silent
import torch
from torch.autograd import Function


class SRUCompute(Function):
    @staticmethod
    def forward(ctx, u, x, weight_c, bias, init, activation_type=1):
        length, batch, d = x.shape
        c = init
        cs, hs = [], []
        for t in range(length):
            f = torch.sigmoid(u[t, :, d:2 * d] + weight_c[:d] * c + bias[:d])
            c = f * c + (1 - f) * u[t, :, :d]
            g = torch.tanh(c) if activation_type == 1 else c
            hs.append(g)
            cs.append(c)
        all_c = torch.stack(cs)
        h = torch.stack(hs)
        ctx.save_for_backward(u, x, weight_c, bias, init, all_c)
        ctx.activation_type = activation_type
        ctx.d = d
        return h, c

    @staticmethod
    def backward(ctx, grad_h, grad_last):
        u, x, weight_c, bias, init, all_c = ctx.saved_tensors
        grad_u = torch.zeros_like(u)
        grad_u[..., : ctx.d] = grad_h
        return grad_u, None, None, None, None, None
