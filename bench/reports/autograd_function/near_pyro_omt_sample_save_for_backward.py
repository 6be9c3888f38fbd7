# Source: https://github.com/pyro-ppl/pyro/pull/1049
# Report: Pyro's OMT multivariate-normal sampler kept the white noise and the transformed sample as ctx attributes (ctx.white, ctx.z); the PR moved them into save_for_backward with the note "never write ctx.blah = blah. memory leaks may arise".
# Shape: the fixed forward: the intermediate tensors stay local and go through ctx.save_for_backward(z, white, scale_tril); the only ctx attribute is the non-tensor sample shape, which is the documented place for non-tensor data.
# Expect: near-miss: must be silent
import torch
from torch.autograd import Function
from torch.autograd.function import once_differentiable


class _OMTMVNSample(Function):
    @staticmethod
    def forward(ctx, loc, scale_tril, shape):
        white = loc.new_empty(shape).normal_()
        z = torch.matmul(white, scale_tril.t())
        ctx.save_for_backward(z, white, scale_tril)
        ctx.sample_shape = shape
        return loc + z

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        z, epsilon, L = ctx.saved_tensors
        batch_dims = tuple(range(len(ctx.sample_shape) - 1))
        loc_grad = grad_output.sum(dim=batch_dims)
        flat_g = grad_output.reshape(-1, L.shape[0])
        flat_eps = epsilon.reshape(-1, L.shape[0])
        L_grad = torch.matmul(flat_g.t(), flat_eps).tril()
        return loc_grad, L_grad, None


class OMTMultivariateNormal:
    def __init__(self, loc, scale_tril):
        self.loc = loc
        self.scale_tril = scale_tril

    def rsample(self, sample_shape=torch.Size()):
        shape = torch.Size(sample_shape) + self.loc.shape
        return _OMTMVNSample.apply(self.loc, self.scale_tril, shape)


def fit(loc, scale_tril, target, steps=5000, lr=1e-2):
    opt = torch.optim.Adam([loc, scale_tril], lr=lr)
    for _ in range(steps):
        x = OMTMultivariateNormal(loc, scale_tril).rsample((256,))
        loss = (x - target).pow(2).sum(-1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()
