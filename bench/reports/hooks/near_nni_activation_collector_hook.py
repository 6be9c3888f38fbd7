# Source: https://github.com/microsoft/nni/pull/4412
# Report: "fix pruning examples & pruner memory usage optimize": after the fix the activation-based pruners keep a running sum of the (detached, transformed) activations instead of one tensor per batch
# Shape: the forward-hook closure from _collector() keeps buffer = [count, running_sum] and does buffer[1] += self._activation_trans(output), where the helper detaches first; hooks are registered in collect() and their handles removed after the trainer runs
# Expect: near-miss: must be silent
from typing import Callable, Dict, List

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn import Module


class ActivationPruner:
    def __init__(self, model: Module, layers: Dict[str, Module], trainer: Callable,
                 optimizer, criterion, training_batches: int, activation: str = "relu"):
        self.model = model
        self.layers = layers
        self.trainer = trainer
        self.optimizer = optimizer
        self.criterion = criterion
        self.training_batches = training_batches
        self._activation = F.relu if activation == "relu" else F.relu6

    def _collector(self, buffer: List) -> Callable[[Module, Tensor, Tensor], None]:
        assert len(buffer) == 0, "collector buffer must start empty"
        # buffer[0]: number of batches summed so far; buffer[1]: running sum, activation-shaped
        buffer.append(0)

        def collect_activation(_module: Module, _input: Tensor, output: Tensor):
            if len(buffer) == 1:
                buffer.append(torch.zeros_like(output))
            if buffer[0] < self.training_batches:
                buffer[1] += self._activation_trans(output)
                buffer[0] += 1
        return collect_activation

    def _activation_trans(self, output: Tensor) -> Tensor:
        raise NotImplementedError()

    def collect(self) -> Dict[str, List]:
        buffers = {name: [] for name in self.layers}
        handles = [layer.register_forward_hook(self._collector(buffers[name]))
                   for name, layer in self.layers.items()]
        self.trainer(self.model, self.optimizer, self.criterion)
        for handle in handles:
            handle.remove()
        return buffers


class ActivationMeanRankPruner(ActivationPruner):
    def _activation_trans(self, output: Tensor) -> Tensor:
        return self._activation(output.detach())

    def compute_metrics(self) -> Dict[str, Tensor]:
        metrics = {}
        for name, (count, total) in self.collect().items():
            mean_act = (total / max(count, 1)).mean(dim=0)
            metrics[name] = mean_act.flatten(1).mean(dim=1) if mean_act.dim() > 1 else mean_act
        return metrics


def trainer(model: Module, optimizer, criterion, train_loader, device):
    model.train()
    for data, target in train_loader:
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        loss = criterion(model(data), target)
        loss.backward()
        optimizer.step()
