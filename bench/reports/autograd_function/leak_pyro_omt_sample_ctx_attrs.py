# Source: https://github.com/pyro-ppl/pyro/pull/1049
# Report: Pyro's OMT multivariate-normal sampler kept the white noise and the transformed sample as ctx attributes (ctx.white, ctx.z); the PR moved them into save_for_backward with the note "never write ctx.blah = blah. memory leaks may arise".
# Shape: forward assigns two freshly computed tensors directly to ctx attributes (only scale_tril goes through save_for_backward) and backward reads them back; backward is simplified here to the plain reparameterised gradient.
# Expect: TML018 lines 13, 14
import torch
from torch.autograd import Function
from torch.autograd.function import once_differentiable


class _OMTMVNSample(Function):
    @staticmethod
    def forward(ctx, loc, scale_tril, shape):
        ctx.white = loc.new_empty(shape).normal_()  # expect: TML018
        ctx.z = torch.matmul(ctx.white, scale_tril.t())  # expect: TML018
        ctx.save_for_backward(scale_tril)
        return loc + ctx.z

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        (L,) = ctx.saved_tensors
        epsilon = ctx.white
        batch_dims = tuple(range(grad_output.dim() - 1))
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
