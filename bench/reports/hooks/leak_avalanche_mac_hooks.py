# Source: https://github.com/ContinualAI/avalanche/blob/eb075be393e1f458b2c352514ff6c17b5a2c0f4e/avalanche/evaluation/metrics/mac.py
# Report: continual-learning evaluation metric MAC (multiply-accumulate count): MinibatchMAC recomputes it after every training iteration by registering a forward hook (a closure over the metric) on every Linear / Conv2d module of the live model and running one dummy forward; the library keeps the handles and removes them all right after that forward
# Shape: library code with its safeguard removed: the handles are still collected in self.hooks but the removal loop after the dummy forward is gone, so every training iteration adds one more hook (and closure) to each Linear / Conv2d of the persistent model; the strategy's training loop that fires the metric each iteration is inlined
# Expect: TML007 line 24
from typing import Optional

import torch
from torch import Tensor
from torch.nn import Module


class MAC:
    def __init__(self):
        self.hooks = []
        self._compute_cost: Optional[int] = 0

    def update(self, model: Module, dummy_input: Tensor):
        for mod in model.modules():
            if MAC.is_recognized_module(mod):

                def foo(a, b, c):
                    return self.update_compute_cost(a, b, c)

                handle = mod.register_forward_hook(foo)  # expect: TML007
                self.hooks.append(handle)

        self._compute_cost = 0
        model(dummy_input)  # trigger forward hooks

    def result(self) -> Optional[int]:
        return self._compute_cost

    def update_compute_cost(self, module, dummy_input, output):
        modname = module.__class__.__name__
        if modname == "Linear":
            self._compute_cost += dummy_input[0].shape[1] * output.shape[1]
        elif modname == "Conv2d":
            n, cout, hout, wout = output.shape
            ksize = module.kernel_size[0] * module.kernel_size[1]
            self._compute_cost += cout * hout * wout * ksize

    @staticmethod
    def is_recognized_module(mod):
        modname = mod.__class__.__name__
        return modname == "Linear" or modname == "Conv2d"


class MinibatchMAC:
    def __init__(self):
        self._mac = MAC()
        self.values = []

    def after_training_iteration(self, model, mb_x):
        self._mac.update(model, mb_x[0].unsqueeze(0))
        self.values.append(self._mac.result())


def train_experience(model, optimizer, criterion, dataloader, metric, device="cuda"):
    model.train()
    for mb_x, mb_y in dataloader:
        mb_x, mb_y = mb_x.to(device), mb_y.to(device)
        optimizer.zero_grad()
        loss = criterion(model(mb_x), mb_y)
        loss.backward()
        optimizer.step()
        metric.after_training_iteration(model, mb_x)
    print(f"MAC_MB: {metric.values[-1]}")


def run(model, optimizer, train_stream, make_loader, device="cuda"):
    metric = MinibatchMAC()
    criterion = torch.nn.CrossEntropyLoss()
    for experience in train_stream:
        train_experience(model, optimizer, criterion, make_loader(experience), metric, device)
