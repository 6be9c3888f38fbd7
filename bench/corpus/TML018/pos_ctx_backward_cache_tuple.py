# Modelled on: https://github.com/dmlc/dgl/pull/1060
# Report: tensors needed for the gradient were put in a Python attribute (ctx.backward_cache) and autograd could not free the tensors created in forward.
import torch
from torch.autograd import Function


class ScatterProduct(Function):
    @staticmethod
    def forward(ctx, out, values, positions, dim):
        out.scatter_(dim, positions, values, reduce="multiply")
        ctx.mark_dirty(out)
        ctx.save_for_backward(out)
        ctx.for_backward = values, positions  # expect: TML018
        ctx.dim = dim
        return out

    @staticmethod
    def backward(ctx, grad_out):
        (out,) = ctx.saved_tensors
        values, positions = ctx.for_backward
        grad_values = (grad_out * out).gather(ctx.dim, positions) / values
        return None, grad_values, None, None
