# Source: https://github.com/EleutherAI/bergson/pull/55
# Report: Bergson's GradientCollector kept every hook handle in self._fwd_hooks/self._bwd_hooks across steps, so the lists grew and each step got slower; the fix clears the lists after removing the hooks.
# Shape: Hooks are registered on every step, but every handle is removed in a finally block and the handle lists are cleared, so nothing accumulates on the modules.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class GradientCollector:
    def __init__(self, model, target_types=(nn.Linear,)):
        self.model = model
        self.targets = [m for m in model.modules() if isinstance(m, target_types)]
        self._fwd_hooks = []
        self._bwd_hooks = []
        self.norms = {}

    def _save_input(self, module, inputs, output):
        module._last_input_norm = inputs[0].detach().norm().item()

    def _save_grad(self, module, grad_input, grad_output):
        self.norms[id(module)] = grad_output[0].detach().norm().item() * module._last_input_norm

    def __enter__(self):
        for m in self.targets:
            self._fwd_hooks.append(m.register_forward_hook(self._save_input))
            self._bwd_hooks.append(m.register_full_backward_hook(self._save_grad))
        return self

    def __exit__(self, *exc):
        for h in self._fwd_hooks + self._bwd_hooks:
            h.remove()
        self._fwd_hooks.clear()
        self._bwd_hooks.clear()
        return False


def collect(model, loader, device="cuda"):
    per_step = []
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        collector = GradientCollector(model)
        try:
            collector.__enter__()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
        finally:
            collector.__exit__(None, None, None)
        per_step.append(dict(collector.norms))
        model.zero_grad(set_to_none=True)
    return per_step
