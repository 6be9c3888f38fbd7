# Source: https://github.com/KamitaniLab/bdpy/pull/91
# Report: fix for bdpy issue #72: forward hooks registered by FeatureExtractor persisted on the encoder after the extractor was destroyed and kept storing features; the PR adds a destructor that removes only the hooks this extractor added.
# Shape: fixed variant: register_forward_hook is still called in __init__ on every reconstruct() call, but the returned handles are kept and removed in __del__, so the shared encoder never accumulates stale hooks.
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


class FeatureExtractorHandle:
    def __init__(self):
        self.outputs = []

    def __call__(self, module, module_in, module_out):
        self.outputs.append(module_out)

    def clear(self):
        self.outputs = []


class FeatureExtractor:
    def __init__(self, encoder, layers, device="cuda", detach=True):
        self._encoder = encoder.to(device)
        self._layers = layers
        self._detach = detach
        self._device = device
        self._extractor = FeatureExtractorHandle()
        self._hook_handles = []
        modules = dict(self._encoder.named_modules())
        for layer in self._layers:
            handle = modules[layer].register_forward_hook(self._extractor)
            self._hook_handles.append(handle)

    def __call__(self, x):
        self._extractor.clear()
        self._encoder(x.to(self._device))
        features = {layer: self._extractor.outputs[i]
                    for i, layer in enumerate(self._layers)}
        if self._detach:
            features = {k: v.detach().cpu().numpy() for k, v in features.items()}
        return features

    def __del__(self):
        for handle in self._hook_handles:
            handle.remove()
        self._hook_handles = []


def reconstruct(target_features, encoder, layers, n_iter=200, lr=0.05):
    extractor = FeatureExtractor(encoder, layers, device="cuda", detach=False)
    image = torch.zeros(1, 3, 224, 224, device="cuda", requires_grad=True)
    optimizer = torch.optim.SGD([image], lr=lr, momentum=0.9)
    for _ in range(n_iter):
        optimizer.zero_grad()
        feats = extractor(image)
        loss = sum(F.mse_loss(feats[l], target_features[l]) for l in layers)
        loss.backward()
        optimizer.step()
    return image.detach().cpu()
