# Modelled on: https://github.com/d2l-ai/d2l-en/pull/1689
# Report: gradient reset through the module instead of the optimizer (model.zero_grad()) is equally valid.
import torch as T
from tqdm import tqdm


def train_epoch(net, train_iter, loss, updater):
    net.train()
    for X, y in tqdm(train_iter):
        net.zero_grad()
        l = loss(net(X), y)
        l.mean().backward()
        updater.step()
