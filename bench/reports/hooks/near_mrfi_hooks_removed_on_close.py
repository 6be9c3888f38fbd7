# Source: https://github.com/fffasttime/MRFI/pull/5
# Report: Each MRFI instantiation registered forward pre-hooks and forward hooks on the model but threw the RemovableHandles away, so over a fault-injection campaign the hooks and their closures piled up and GPU/CPU memory ran out.
# Shape: the PR's approach: every RemovableHandle is kept in self._hook_handles and close() removes them; the campaign still builds a fresh injector per trial but closes it in a finally block.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class FaultInjector:
    def __init__(self, model, layer_types=(nn.Conv2d, nn.Linear), ber=1e-6):
        self.model = model
        self.ber = ber
        self._hook_handles = []
        self._closed = False
        for module in model.modules():
            if isinstance(module, layer_types):
                self._hook_handles.append(module.register_forward_pre_hook(self._pre_hook))

    def _pre_hook(self, module, inputs):
        x = inputs[0]
        mask = torch.rand_like(x) < self.ber
        return (torch.where(mask, -x, x),) + tuple(inputs[1:])

    def remove_hooks(self):
        for handle in self._hook_handles:
            handle.remove()
        self._hook_handles.clear()

    def close(self):
        if not self._closed:
            self.remove_hooks()
            self._closed = True

    def evaluate(self, loader, device):
        correct = total = 0
        with torch.no_grad():
            for x, y in loader:
                pred = self.model(x.to(device)).argmax(dim=1)
                correct += (pred == y.to(device)).sum().item()
                total += y.numel()
        return correct / total


def run_campaign(model, loader, device, bers=(1e-7, 1e-6, 1e-5), repeats=20):
    model.eval().to(device)
    results = []
    for ber in bers:
        for _ in range(repeats):
            fi = FaultInjector(model, ber=ber)
            try:
                results.append((ber, fi.evaluate(loader, device)))
            finally:
                fi.close()
    return results
