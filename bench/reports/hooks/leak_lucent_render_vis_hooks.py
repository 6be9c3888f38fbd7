# Source: https://github.com/greentfrapp/lucent/issues/45
# Report: render_vis got slower (CPU and GPU) every time it was called, e.g. once per video frame: each call registered a forward hook on every submodule and never removed them, so hooks piled up on the model
# Shape: a ModuleHook helper registers the hook in __init__ and keeps the handle on self, hook_model walks all submodules, render_vis is called once per frame and never calls close()
# Expect: TML007 line 18
from collections import OrderedDict

import torch
from tqdm import tqdm

from myvis import objectives, param, transform
from myvis.misc.io import tensor_to_img_array


class ModuleHook:
    """Keeps the latest output of one layer so objectives can read it."""

    def __init__(self, module):
        self.hook = module.register_forward_hook(self.hook_fn)  # expect: TML007
        self.module = None
        self.features = None

    def hook_fn(self, module, input, output):
        self.module = module
        self.features = output

    def close(self):
        self.hook.remove()


def hook_model(model, image_f):
    features = OrderedDict()

    def hook_layers(net, prefix=()):
        for name, layer in getattr(net, "_modules", {}).items():
            if layer is None:
                continue
            features["_".join(prefix + (name,))] = ModuleHook(layer)
            hook_layers(layer, prefix=prefix + (name,))

    hook_layers(model)

    def hook(layer):
        if layer == "input":
            return image_f()
        if layer == "labels":
            return list(features.values())[-1].features
        return features[layer].features

    return hook


def render_vis(model, objective_f, param_f=None, thresholds=(256,), lr=5e-2):
    params, image_f = param_f() if param_f else param.image(224)
    optimizer = torch.optim.Adam(params, lr=lr)
    transform_f = transform.compose(transform.standard_transforms)
    hook = hook_model(model, image_f)
    objective_f = objectives.as_objective(objective_f)
    images = []
    for i in tqdm(range(1, max(thresholds) + 1)):
        def closure():
            optimizer.zero_grad()
            model(transform_f(image_f()))
            loss = objective_f(hook)
            loss.backward()
            return loss

        optimizer.step(closure)
        if i in thresholds:
            images.append(tensor_to_img_array(image_f()))
    return images


def visualize_video(model, frames, layer="mixed4a:476"):
    model.eval()
    results = []
    for frame in frames:
        param_f = lambda: param.image(224, init=frame)
        results.append(render_vis(model, layer, param_f=param_f)[-1])
    return results
