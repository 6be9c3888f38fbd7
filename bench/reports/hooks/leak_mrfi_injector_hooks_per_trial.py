# Source: https://github.com/fffasttime/MRFI/pull/5
# Report: MRFI registered forward pre-hooks and forward hooks on every module but discarded the returned RemovableHandle objects, so instantiating MRFI repeatedly over a fault-injection campaign accumulated hook closures (holding the injector's config/state) that were never freed, exhausting GPU/CPU memory.
# Shape: every campaign trial wraps the same network in a new FaultInjector whose __init__ registers two hooks per module and throws the handles away; the hooks (and the injector objects their lambdas close over) pile up on the model trial after trial.
# Expect: TML007 lines 21, 22
import torch
from torch import nn


class FaultInjector:
    """Flips the sign of a random fraction of every module's activations."""

    def __init__(self, model: nn.Module, rate: float):
        self.model = model
        self.rate = rate
        self.golden = False
        self.observed = {}
        self._add_hooks()

    def _add_hooks(self):
        for name, module in self.model.named_modules():
            module.register_forward_pre_hook(lambda mod, inp, n=name: self._pre_hook(n, inp))  # expect: TML007
            module.register_forward_hook(lambda mod, inp, out, n=name: self._after_hook(n, out))  # expect: TML007

    def _pre_hook(self, name, inputs):
        if inputs and torch.is_tensor(inputs[0]):
            self.observed[name + ".in"] = inputs[0].abs().max().item()

    def _after_hook(self, name, output):
        if self.golden or not torch.is_tensor(output):
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
            correct = total = 0
            for images, labels in loader:
                images, labels = images.to(device), labels.to(device)
                pred = fi_model(images).argmax(dim=1)
                correct += (pred == labels).sum().item()
                total += labels.numel()
            results.append((rate, trial, correct / total))
    return results
