# Modelled on: https://github.com/podgorskiy/ALAE/issues/55
# Report: near-miss: requires_grad set on input tensors (for an R1 penalty), where the attribute is real.
import torch


def r1_penalty(D, reals, gamma=10.0):
    reals = reals.detach()
    reals.requires_grad = True
    real_loss = D(reals).sum()
    grads, = torch.autograd.grad(real_loss, reals, create_graph=True)
    return gamma / 2 * grads.pow(2).flatten(1).sum(1).mean()
