# Modelled on: https://github.com/dmlc/dgl/pull/1060
# Report: tensors needed for the gradient were put in a Python attribute (ctx.backward_cache) and autograd could not free the tensors created in forward.
import torch
from torch.autograd import Function


class ScatterMul(Function):
    @staticmethod
    def forward(ctx, out, src, index, dim):
        out.scatter_(dim, index, src, reduce="multiply")
        ctx.mark_dirty(out)
        ctx.save_for_backward(out)
        ctx.backward_cache = src, index  # expect: TML018
        ctx.dim = dim
        return out

    @staticmethod
    def backward(ctx, grad_out):
        (out,) = ctx.saved_tensors
        src, index = ctx.backward_cache
        grad_src = (grad_out * out).gather(ctx.dim, index) / src
        return None, grad_src, None, None
