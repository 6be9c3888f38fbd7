# Modelled on: https://github.com/pytorch/pytorch/issues/17568
# Report: near-miss: retain_graph on the last backward is wasteful but nothing from the iteration survives it, so the graph is freed when `loss` is rebound.
import torch as T


def train(net, loader, opt, crit):
    for x, y in loader:
        opt.zero_grad()
        out = net(x)
        loss = crit(out, y)
        loss.backward(retain_graph=True)
        opt.step()
