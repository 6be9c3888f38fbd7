# Modelled on: https://github.com/pytorch/pytorch/issues/81223
# Report: non-tensors (dims, flags, shapes, Python callables) are meant to be stored directly on ctx.
import torch


class ScaledSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, dim):
        y = torch.softmax(x * scale, dim=dim)
        ctx.scale = float(scale)
        ctx.dim = dim
        ctx.input_shape = x.shape
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_y):
        (y,) = ctx.saved_tensors
        grad_x = y * (grad_y - (grad_y * y).sum(ctx.dim, keepdim=True))
        return grad_x * ctx.scale, None, None
