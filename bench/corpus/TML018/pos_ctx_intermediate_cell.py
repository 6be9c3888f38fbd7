# Modelled on: https://github.com/asappresearch/sru/pull/171
# Report: intermediate tensors (e.g. the cell state c) were stored on ctx without save_for_backward, a potential memory leak.
import torch as T


class SRUCompute(T.autograd.Function):
    @staticmethod
    def forward(ctx, u, x, weight_c, bias, init):
        f = T.sigmoid(u[..., 1] + bias[0])
        c = f * init + (1 - f) * u[..., 0]
        h = T.tanh(c) * weight_c + x
        ctx.c = c  # expect: TML018
        ctx.f = f  # expect: TML018
        ctx.save_for_backward(u, x, weight_c, bias, init)
        return h, c

    @staticmethod
    def backward(ctx, grad_h, grad_c):
        u, x, weight_c, bias, init = ctx.saved_tensors
        grad_pre = grad_h * weight_c * (1 - T.tanh(ctx.c) ** 2) + grad_c
        return grad_pre.unsqueeze(-1).expand_as(u) * 0, grad_h, None, None, ctx.f * grad_pre
