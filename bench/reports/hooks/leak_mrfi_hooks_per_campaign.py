# Source: https://github.com/fffasttime/MRFI/pull/5
# Report: Each MRFI instantiation registered forward pre-hooks and forward hooks on the model but threw the RemovableHandles away, so over a fault-injection campaign the hooks and their closures piled up and GPU/CPU memory ran out.
# Shape: a fault-injection wrapper registers observer and injector hooks on the shared model in __init__ and keeps no handles; the campaign builds a fresh wrapper for every bit-error rate.
# Expect: TML007 lines 29, 30
import torch
import torch.nn as nn


class FaultInjector:
    def __init__(self, model, layer_types=(nn.Conv2d, nn.Linear), ber=1e-6):
        self.model = model
        self.ber = ber
        self.activations = {}
        self._add_hooks(layer_types)

    def _pre_hook(self, module, inputs):
        x = inputs[0]
        mask = torch.rand_like(x) < self.ber
        return (torch.where(mask, -x, x),) + tuple(inputs[1:])

    def _post_hook(self, name):
        def hook(module, inputs, output):
            self.activations[name] = output.abs().amax().item()
        return hook

    def _add_hooks(self, layer_types):
        for name, module in self.model.named_modules():
            if isinstance(module, layer_types):
                module.register_forward_pre_hook(self._pre_hook)  # expect: TML007
                module.register_forward_hook(self._post_hook(name))  # expect: TML007

    def evaluate(self, loader, device):
        correct = total = 0
        with torch.no_grad():
            for x, y in loader:
                pred = self.model(x.to(device)).argmax(dim=1)
                correct += (pred == y.to(device)).sum().item()
                total += y.numel()
        return correct / total


def run_campaign(model, loader, device, bers=(1e-7, 1e-6, 1e-5, 1e-4), repeats=20):
    model.eval().to(device)
    results = []
    for ber in bers:
        for _ in range(repeats):
            fi = FaultInjector(model, ber=ber)
            results.append((ber, fi.evaluate(loader, device)))
    return results
