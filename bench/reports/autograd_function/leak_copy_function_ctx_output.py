# Source: https://github.com/pytorch/pytorch/issues/5569
# Report: A custom autograd.Function whose forward did `ctx.output_features = input_features.clone()` and returned that tensor leaked memory when applied to CUDA inputs in a long loop; a maintainer replied that inputs/outputs must go through save_for_backward or such leaks are expected.
# Shape: forward stashes its own output on a ctx attribute and returns it, giving an output -> grad_fn -> ctx -> output reference cycle, so each call's CUDA output outlives the caller's reference until Python's cyclic GC happens to run, which tensor bytes never trigger (backward is never even called).
# Expect: TML018 line 12
import torch
import torch.nn as nn


class InputLayerFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input_features, weight):
        ctx.output_features = input_features.clone()  # expect: TML018
        ctx.weight_shape = weight.shape
        return ctx.output_features

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.clone(), None


class InputLayer(nn.Module):
    def __init__(self, n=100):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n, n).normal_())

    def forward(self, x):
        return InputLayerFunction.apply(x, self.weight)


def stream_batches(layer, n_iters=1_000_000, device="cuda"):
    for it in range(n_iters):
        inp = torch.empty(100, 100).uniform_().to(device)
        out = layer(inp)
        if it % 10_000 == 0:
            print(it, tuple(out.shape), out.type(), torch.cuda.memory_allocated() // 2**20, "MiB")
