# Source: https://github.com/getkeops/keops/issues/353
# Report: PyKeOps 2.2 leaks GPU memory on every reduction call (2.1.2 is clean); bisected to the forward-AD merge that kept args and result as plain ctx attributes
# Shape: setup_context of the custom autograd.Function stores the output tensor on ctx (ctx.result = result) besides save_for_backward: output -> grad_fn -> ctx -> output is a reference cycle only the cycle collector frees
# Expect: TML018 lines 62, 63
import torch


class GenredParams:
    def __init__(self, formula, aliases, nx=None, ny=None):
        self.formula = formula
        self.aliases = aliases
        self.nx = nx
        self.ny = ny
        self.optional_flags = {}
        self.out = None


def _keops_reduce(params, *args):
    # stands in for the compiled KeOps kernel: sum_j exp(-|x_i - y_j|^2) * b_j
    x, y, b = args
    d2 = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    return torch.exp(-d2) @ b


class GenredAutograd_base:
    @staticmethod
    def _forward(params, *args):
        args = tuple(a.contiguous() for a in args)
        result = _keops_reduce(params, *args)
        dimout, tag_ij = result.shape[-1], 0
        return result, torch.tensor([dimout, tag_ij])

    @staticmethod
    def _backward(ctx, G, _):
        x, y, b, result = ctx.saved_tensors
        G = G.contiguous()
        d2 = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
        K = torch.exp(-d2)
        grad_b = K.t() @ G
        return None, None, None, grad_b


class GenredAutograd(torch.autograd.Function):
    @staticmethod
    def forward(*inputs):
        return GenredAutograd_base._forward(*inputs)

    @staticmethod
    def setup_context(ctx, inputs, outputs):
        params, *args = inputs
        result, info = outputs
        ctx.mark_non_differentiable(info)
        dimout, tag_ij = int(info[0]), int(info[1])

        ctx.optional_flags = params.optional_flags.copy()
        ctx.params = params
        ctx.dimout = dimout
        ctx.tagIJ = tag_ij
        ctx.save_for_backward(*args, result)

        # forward-mode AD cannot read saved_tensors, so keep args and result here too
        ctx.args = args  # expect: TML018
        ctx.result = result  # expect: TML018

    @staticmethod
    def backward(ctx, G, _):
        return GenredAutograd_base._backward(ctx, G, _)

    @staticmethod
    def jvp(ctx, *grad_inputs):
        x, y, b = ctx.args
        result = ctx.result
        db = grad_inputs[3]
        d2 = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
        return torch.exp(-d2) @ db + 0.0 * result, None


def GenredAutograd_fun(*inputs):
    return GenredAutograd.apply(*inputs)[0]


if __name__ == "__main__":
    params = GenredParams("Exp(-SqNorm2(x-y))*b", ["x=Vi(3)", "y=Vj(3)", "b=Vj(1)"])
    x = torch.randn(2000, 3, device="cuda")
    y = torch.randn(2000, 3, device="cuda")
    b = torch.randn(2000, 1, device="cuda", requires_grad=True)
    previous = 0
    for _ in range(20):
        out = GenredAutograd_fun(params, x, y, b)
        mem = torch.cuda.memory_allocated()
        print("Allocated mem:", mem, "diff:", mem - previous)
        previous = mem
