# Source: https://github.com/microsoft/nni/pull/4412
# Report: "fix pruning examples & pruner memory usage optimize": the activation-based pruners (APoZ / mean-activation rank) kept one activation tensor per training batch in the hook buffer until the masks were computed
# Shape: _collector() returns a forward-hook closure that appends self._activation(output.detach()) to `buffer` for each of `training_batches` batches; the buffer is owned by the data collector and outlives every forward, so N full-size GPU activation maps per layer stay alive
# Expect: TML004 line 27
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
        def collect_activation(_module: Module, _input: Tensor, output: Tensor):
            if len(buffer) < self.training_batches:
                buffer.append(self._activation(output.detach()))  # expect: TML004
        return collect_activation

    def collect(self) -> Dict[str, List[Tensor]]:
        buffers = {name: [] for name in self.layers}
        handles = [layer.register_forward_hook(self._collector(buffers[name]))
                   for name, layer in self.layers.items()]
        self.trainer(self.model, self.optimizer, self.criterion)
        for handle in handles:
            handle.remove()
        return buffers


class ActivationMeanRankPruner(ActivationPruner):
    def compute_metrics(self) -> Dict[str, Tensor]:
        metrics = {}
        for name, acts in self.collect().items():
            mean_act = torch.cat(acts, dim=0).mean(dim=0)
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
