# Modelled on: https://airoads.org/ch06-deep-learning/ch02-pytorch/02-autograd/
# Report: near-miss: the update helper is decorated with @torch.no_grad(), so the in-place updates are not tracked.
import torch


@torch.no_grad()
def sgd(params, lr, batch_size):
    for param in params:
        param -= lr * param.grad / batch_size
        param.grad.zero_()


def train(net_params, loss_fn, data_iter, lr=0.03, batch_size=10):
    for X, y in data_iter:
        loss_fn(X, y, *net_params).sum().backward()
        sgd(net_params, lr, batch_size)
