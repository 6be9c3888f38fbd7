# Source: https://github.com/dmlc/dgl/pull/1060
# Report: DGL's PyTorch backend stashed tensors needed for backward in a Python attribute (ctx.backward_cache) instead of save_for_backward, and autograd could not free the forward tensors, leaking memory.
# Shape: a scatter-multiply autograd.Function keeps the source and index tensors as a tuple attribute on ctx.
# Expect: TML018 line 15
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


def message_passing(h, edge_src, num_nodes):
    out = torch.ones(num_nodes, h.size(1), device=h.device)
    index = edge_src.unsqueeze(1).expand(-1, h.size(1))
    return ScatterMul.apply(out, h, index, 0)
