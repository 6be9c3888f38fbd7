# Source: https://github.com/Prisma-Multimodal/ViT-Prisma/issues/188
# Report: edge-attribution (EAP-IG) over a HookedViT leaks memory: remove_hooks(dir="both") uses `elif`, so the per-batch backward hooks are never removed
# Shape: the fix from the report: remove_hooks tests fwd and bwd independently (`if`, not `elif`), so every per-batch handle is .remove()d
# Expect: near-miss: must be silent
from typing import List

import torch
import torch.nn as nn


class Handle:
    def __init__(self, hook, is_permanent=False):
        self.hook = hook
        self.is_permanent = is_permanent


class HookPoint(nn.Module):
    """Identity module that exists only to carry hooks (TransformerLens style)."""

    def __init__(self, name=None):
        super().__init__()
        self.name = name
        self.fwd_hooks: List[Handle] = []
        self.bwd_hooks: List[Handle] = []

    def add_hook(self, hook, dir="fwd", is_permanent=False):
        if dir == "fwd":
            def full_hook(module, module_input, module_output):
                return hook(module_output, hook=self)

            handle = self.register_forward_hook(full_hook)
            self.fwd_hooks.append(Handle(handle, is_permanent))
        elif dir == "bwd":
            def full_hook(module, grad_input, grad_output):
                return hook(grad_output[0], hook=self)

            handle = self.register_backward_hook(full_hook)
            self.bwd_hooks.append(Handle(handle, is_permanent))
        else:
            raise ValueError(f"Invalid dir {dir}")

    def remove_hooks(self, dir="fwd", including_permanent=False):
        def _remove(handles):
            kept = []
            for h in handles:
                if including_permanent or not h.is_permanent:
                    h.hook.remove()
                else:
                    kept.append(h)
            return kept

        if dir == "fwd" or dir == "both":
            self.fwd_hooks = _remove(self.fwd_hooks)
        if dir == "bwd" or dir == "both":
            self.bwd_hooks = _remove(self.bwd_hooks)

    def forward(self, x):
        return x


def attribute_edges(model, hook_points, loader, metric, n_steps=5, device="cuda"):
    scores = torch.zeros(len(hook_points), device=device)
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        grads = {}
        for i, hp in enumerate(hook_points):
            hp.add_hook(lambda g, hook, i=i: grads.__setitem__(i, g.detach()), dir="bwd")
        for step in range(1, n_steps + 1):
            logits = model(images * step / n_steps)
            metric(logits, labels).backward()
            for i in grads:
                scores[i] += grads[i].abs().sum() / n_steps
        model.zero_grad(set_to_none=True)
        for hp in hook_points:
            hp.remove_hooks(dir="both")
    return scores.cpu()
