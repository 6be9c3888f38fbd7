# Modelled on: https://github.com/pyro-ppl/pyro/pull/1049
# Report: "never write ctx.blah = blah": the fix saves the intermediate tensors with save_for_backward.
import torch
from torch.autograd import Function


class CorrelatedNoise(Function):
    @staticmethod
    def forward(ctx, loc, scale_tril, shape):
        eps = loc.new_empty(shape).normal_()
        noise = eps @ scale_tril.t()
        ctx.save_for_backward(eps, scale_tril)
        return loc + noise

    @staticmethod
    def backward(ctx, grad_output):
        eps, scale_tril = ctx.saved_tensors
        return grad_output, (grad_output.unsqueeze(-1) * eps.unsqueeze(-2)).sum(0).tril(), None
