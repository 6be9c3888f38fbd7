# Source: https://github.com/goodfire-ai/spd/issues/57
# Report: GPU memory grows slowly over SPD training (first blamed on a needless retain_graph=True); the per-step input-cache hook helper itself is correct
# Shape: the repository's helper: the per-call pre-hooks are kept as RemovableHandles and removed in a finally block, so each step's hooks (and their cache closures) die with the call
# Expect: near-miss: must be silent
from functools import partial

import torch
import torch.nn as nn
from torch import Tensor


class ComponentModel(nn.Module):
    def __init__(self, base_model: nn.Module, target_module_names: list[str]):
        super().__init__()
        self.model = base_model
        self.target_module_names = target_module_names

    def forward(self, *args, **kwargs):
        return self.model(*args, **kwargs)

    def forward_with_pre_forward_cache_hooks(self, *args, module_names: list[str], **kwargs):
        """Run the model and return (output, {module_name: input to that module})."""
        cache: dict[str, Tensor] = {}

        def cache_hook(_: nn.Module, inputs: tuple[Tensor, ...], param_name: str) -> None:
            cache[param_name] = inputs[0]

        handles: list[torch.utils.hooks.RemovableHandle] = []
        for module_name in module_names:
            module = self.model.get_submodule(module_name)
            assert module is not None, f"Module {module_name} not found"
            handles.append(
                module.register_forward_pre_hook(partial(cache_hook, param_name=module_name))
            )

        try:
            out = self(*args, **kwargs)
            return out, cache
        finally:
            for handle in handles:
                handle.remove()


def causal_importances_from(pre_acts: dict[str, Tensor], Vs: dict[str, Tensor], gates: nn.ModuleDict):
    return {name: torch.sigmoid(gates[name](pre_acts[name] @ Vs[name])) for name in pre_acts}


def optimize(model: ComponentModel, components: nn.ModuleDict, gates: nn.ModuleDict,
             train_loader, steps: int, lr: float, device: str, loss_fn):
    params = list(components.parameters()) + list(gates.parameters())
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0)
    data_iter = iter(train_loader)
    for step in range(steps + 1):
        optimizer.zero_grad()
        try:
            batch = next(data_iter)
        except StopIteration:
            data_iter = iter(train_loader)
            batch = next(data_iter)
        batch = batch.to(device)

        target_out, pre_weight_acts = model.forward_with_pre_forward_cache_hooks(
            batch, module_names=list(components.keys())
        )
        Vs = {name: components[name].V for name in components}
        causal_importances = causal_importances_from(pre_weight_acts, Vs, gates)
        total_loss, loss_terms = loss_fn(model, batch, components, causal_importances, target_out)
        log_data = {"misc/step": step, "loss/total": total_loss.item()}
        log_data.update(loss_terms)

        if step != steps:
            total_loss.backward()
            optimizer.step()
