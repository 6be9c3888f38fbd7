# Modelled on: https://github.com/pytorch/pytorch/issues/5569
# Report: memory leaked in a loop over a custom Function that kept its output on ctx; "you should use save_for_backward for inputs and outputs".
import torch


class PassThrough(torch.autograd.Function):
    @staticmethod
    def forward(ctx, features, scale):
        ctx.result = features.clone()  # expect: TML018
        return ctx.result

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None
