# Modelled on: https://github.com/pytorch/pytorch/issues/5569
# Report: memory leaked in a loop over a custom Function that kept its output on ctx; "you should use save_for_backward for inputs and outputs".
import torch


class CopyFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input_features, weight):
        ctx.output_features = input_features.clone()  # expect: TML018
        return ctx.output_features

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None
