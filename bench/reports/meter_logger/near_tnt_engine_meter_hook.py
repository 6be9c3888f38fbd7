# Source: https://github.com/meta-pytorch/tnt/pull/6
# Report: torchnet Engine after PR #6: the shared state dict drops the step's loss/output right after the on_forward hook, and the hook feeds the meter a Python number
# Shape: on_forward passes state["loss"].item() to the module-level AverageValueMeter (self.sum += float); Engine sets state["output"] and state["loss"] to None after the hook, so no graph survives the step
# Expect: near-miss: must be silent
import math

import torch
import torch.nn.functional as F


class AverageValueMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.n = 0
        self.sum = 0.0
        self.var = 0.0

    def add(self, value, n=1):
        self.sum += value
        self.var += value * value
        self.n += n

    def value(self):
        mean = self.sum / self.n
        std = math.sqrt(max(self.var / self.n - mean * mean, 0.0))
        return mean, std


class Engine:
    def __init__(self):
        self.hooks = {}

    def hook(self, name, state):
        if name in self.hooks:
            self.hooks[name](state)

    def train(self, network, iterator, maxepoch, optimizer):
        state = {
            "network": network,
            "iterator": iterator,
            "maxepoch": maxepoch,
            "optimizer": optimizer,
            "epoch": 0,
            "t": 0,
            "train": True,
        }
        self.hook("on_start", state)
        while state["epoch"] < state["maxepoch"]:
            self.hook("on_start_epoch", state)
            for sample in state["iterator"]:
                state["sample"] = sample
                self.hook("on_sample", state)

                def closure():
                    loss, output = state["network"](state["sample"])
                    state["output"] = output
                    state["loss"] = loss
                    loss.backward()
                    self.hook("on_forward", state)
                    # to free memory held by the graph of this step
                    state["output"] = None
                    state["loss"] = None
                    return loss

                state["optimizer"].zero_grad()
                state["optimizer"].step(closure)
                self.hook("on_update", state)
                state["t"] += 1
            state["epoch"] += 1
            self.hook("on_end_epoch", state)
        self.hook("on_end", state)
        return state


model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 10)).cuda()
meter_loss = AverageValueMeter()


def h(sample):
    inputs, targets = sample[0].cuda(), sample[1].cuda()
    out = model(inputs)
    return F.cross_entropy(out, targets), out


def on_forward(state):
    meter_loss.add(state["loss"].item())


def on_start_epoch(state):
    meter_loss.reset()


def on_end_epoch(state):
    print("epoch %d loss %.4f" % (state["epoch"], float(meter_loss.value()[0])))


def main(train_loader):
    engine = Engine()
    engine.hooks["on_forward"] = on_forward
    engine.hooks["on_start_epoch"] = on_start_epoch
    engine.hooks["on_end_epoch"] = on_end_epoch
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    engine.train(h, train_loader, maxepoch=10, optimizer=optimizer)
