# Source: https://github.com/pytorch/captum/blob/9c708a4f45639ffb0d82faad17a37648f5a3e4e8/captum/_utils/gradient.py
# Report: captum's _forward_layer_distributed_eval registers a forward (pre-)hook per requested layer and removes the handles in finally; here the helper forgets the removal (handles never kept)
# Shape: explain_requests calls attribute() once per batch on the same model layer; each call registers another hook whose closure holds that call's saved_layer dict of activations, so hooks and activations pile up
# Expect: TML007 lines 31, 33
import threading
from collections import defaultdict

import torch
from torch.nn import Module


def _forward_layer_distributed_eval(forward_fn, inputs, layer, target_ind=None,
                                    attribute_to_layer_input=False):
    saved_layer = defaultdict(dict)
    lock = threading.Lock()
    all_layers = [layer] if isinstance(layer, Module) else layer

    def hook_wrapper(original_module):
        def forward_hook(module, inp, out=None):
            eval_tsrs = inp if attribute_to_layer_input else out
            if not isinstance(eval_tsrs, tuple):
                eval_tsrs = (eval_tsrs,)
            with lock:
                saved_layer[original_module][eval_tsrs[0].device] = tuple(
                    t.clone() for t in eval_tsrs
                )
        return forward_hook

    for single_layer in all_layers:
        if attribute_to_layer_input:
            single_layer.register_forward_pre_hook(hook_wrapper(single_layer))  # expect: TML007
        else:
            single_layer.register_forward_hook(hook_wrapper(single_layer))  # expect: TML007
    output = forward_fn(inputs)
    if target_ind is not None:
        output = output[torch.arange(output.shape[0]), target_ind]

    if len(saved_layer) == 0:
        raise AssertionError("Forward hook did not obtain any outputs for given layer")
    return saved_layer, output


class LayerActivation:
    def __init__(self, forward_func, layer):
        self.forward_func = forward_func
        self.layer = layer

    def attribute(self, inputs, attribute_to_layer_input=False):
        with torch.no_grad():
            saved, _ = _forward_layer_distributed_eval(
                self.forward_func, inputs, self.layer,
                attribute_to_layer_input=attribute_to_layer_input,
            )
        return torch.cat([t[0] for t in saved[self.layer].values()])


def explain_requests(model, layer, loader, device):
    model.eval()
    explainer = LayerActivation(model, layer)
    results = []
    for images, _ in loader:
        images = images.to(device)
        acts = explainer.attribute(images)
        results.append(acts.mean(dim=(2, 3)).cpu())
    return torch.cat(results)
