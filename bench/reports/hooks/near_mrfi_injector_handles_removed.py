# Source: https://github.com/fffasttime/MRFI/pull/5
# Report: MRFI registered forward pre-hooks and forward hooks on every module but discarded the returned RemovableHandle objects, so instantiating MRFI repeatedly over a fault-injection campaign accumulated hook closures that were never freed; the fix tracks the handles and adds remove_hooks()/close() to release them.
# Shape: the injector keeps every RemovableHandle in self._hook_handles and the campaign closes each injector in a finally block, so each trial's hooks are removed before the next trial registers its own.
# Expect: near-miss: must be silent
import torch
from torch import nn


class FaultInjector:
    def __init__(self, model: nn.Module, rate: float):
        self.model = model
        self.rate = rate
        self.observed = {}
        self._hook_handles = []
        self._add_hooks()

    def _add_hooks(self):
        for name, module in self.model.named_modules():
            self._hook_handles.append(module.register_forward_pre_hook(
                lambda mod, inp, n=name: self._pre_hook(n, inp)))
            self._hook_handles.append(module.register_forward_hook(
                lambda mod, inp, out, n=name: self._after_hook(n, out)))

    def close(self):
        for handle in self._hook_handles:
            handle.remove()
        self._hook_handles.clear()

    def _pre_hook(self, name, inputs):
        if inputs and torch.is_tensor(inputs[0]):
            self.observed[name + ".in"] = inputs[0].abs().max().item()

    def _after_hook(self, name, output):
        if not torch.is_tensor(output):
            return None
        flip = torch.rand_like(output) < self.rate
        return torch.where(flip, -output, output)

    def __call__(self, *args):
        with torch.no_grad():
            return self.model(*args)


def run_campaign(model, loader, rates, trials=10, device="cuda"):
    model.to(device).eval()
    results = []
    for rate in rates:
        for trial in range(trials):
            fi_model = FaultInjector(model, rate)
            try:
                correct = total = 0
                for images, labels in loader:
                    images, labels = images.to(device), labels.to(device)
                    correct += (fi_model(images).argmax(dim=1) == labels).sum().item()
                    total += labels.numel()
            finally:
                fi_model.close()
            results.append((rate, trial, correct / total))
    return results
