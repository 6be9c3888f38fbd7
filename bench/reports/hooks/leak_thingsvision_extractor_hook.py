# Source: https://github.com/ViCCo-Group/thingsvision/commit/0bf73829f522e98e6be693a31b7dac36cea46bd9
# Report: "fixed memory leak/slowdown": every extract_features() call registered a new forward hook on the chosen module and never removed it
# Shape: register_hook() is called once per extraction (users loop over layer names); the handle is discarded, so hooks that clone activations pile up on the persistent model
# Expect: TML007 line 33
import os

import numpy as np
import torch

activations = {}


class PyTorchExtractor:
    def __init__(self, model, device="cuda"):
        self.model = model.eval()
        self.device = device

    def get_activation(self, name):
        """Store a copy of the module output under its name."""

        def hook(module, inputs, output):
            act = output[0] if isinstance(output, tuple) else output
            try:
                activations[name] = act.clone().detach()
            except AttributeError:
                activations[name] = act.clone()

        return hook

    def register_hook(self, module_name):
        for n, m in self.model.named_modules():
            if n == module_name:
                m.register_forward_hook(self.get_activation(n))  # expect: TML007

    @torch.no_grad()
    def _extract_batch(self, batch, module_name, flatten_acts):
        batch = batch.to(self.device)
        _ = self.model(batch)
        act = activations[module_name]
        if flatten_acts:
            act = act.view(act.size(0), -1)
        return act.cpu().numpy()

    def extract_features(self, batches, module_name, flatten_acts, output_dir=None):
        global activations
        self.model = self.model.to(self.device)
        activations = {}
        self.register_hook(module_name)
        features = []
        for batch in batches:
            features.append(self._extract_batch(batch, module_name, flatten_acts))
        features = np.vstack(features)
        if output_dir:
            np.save(os.path.join(output_dir, module_name + ".npy"), features)
        return features


def extract_all_layers(model, batches, module_names, output_dir):
    extractor = PyTorchExtractor(model)
    results = {}
    for name in module_names:
        results[name] = extractor.extract_features(batches, name, flatten_acts=True,
                                                   output_dir=output_dir)
    return results
