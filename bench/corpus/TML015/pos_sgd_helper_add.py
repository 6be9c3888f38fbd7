# Modelled on: https://github.com/lhycms/Deep_Learning_Notes
# Report: RuntimeError: a leaf Variable that requires grad is being used in an in-place operation; fix with torch.no_grad() or a non-in-place op.
import torch


def sgd(params, lr, batch_size):
    for param in params:
        param.sub_(lr * param.grad / batch_size)  # expect: TML015
        param.grad.zero_()


def train(net_params, loss_fn, data_iter, lr=0.03, batch_size=10):
    for X, y in data_iter:
        l = loss_fn(X, y, *net_params)
        l.sum().backward()
        sgd(net_params, lr, batch_size)
