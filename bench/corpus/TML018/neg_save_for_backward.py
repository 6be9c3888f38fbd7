# Modelled on: https://github.com/pyro-ppl/pyro/pull/1049
# Report: "never write ctx.blah = blah": the fix saves the intermediate tensors with save_for_backward.
import torch
from torch.autograd import Function


class OMTSample(Function):
    @staticmethod
    def forward(ctx, loc, scale_tril, shape):
        white = loc.new_empty(shape).normal_()
        z = torch.matmul(white, scale_tril.t())
        ctx.save_for_backward(z, white, scale_tril)
        return loc + z

    @staticmethod
    def backward(ctx, grad_output):
        z, white, scale_tril = ctx.saved_tensors
        return grad_output, (grad_output.unsqueeze(-1) * white.unsqueeze(-2)).sum(0).tril(), None
