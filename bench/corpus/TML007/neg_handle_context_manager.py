# Modelled on: https://github.com/pytorch/pytorch/pull/446
# Report: near-miss: the handle returned by register_forward_hook is used as a context manager, which removes the hook on exit.
import torch


@torch.no_grad()
def collect_activations(model, layer, loader):
    means = []
    for x in loader:
        captured = []
        with layer.register_forward_hook(lambda m, i, o: captured.append(o.mean().item())):
            model(x)
        means.extend(captured)
    return means
