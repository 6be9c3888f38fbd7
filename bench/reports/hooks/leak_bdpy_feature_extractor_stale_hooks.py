# Source: https://github.com/KamitaniLab/bdpy/issues/72
# Report: FeatureExtractor registers forward hooks on the encoder in __init__ but never removes them, so when reconstruct() is called repeatedly with the same encoder the leftover hooks keep accumulating features and occupy memory.
# Shape: every reconstruct() call builds a new FeatureExtractor (detach=False) on a shared encoder; the old handles stay registered, are fired on every forward, and their never-cleared output lists grow with graph-carrying activations.
# Expect: TML007 line 29
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
        modules = dict(self._encoder.named_modules())
        for layer in self._layers:
            modules[layer].register_forward_hook(self._extractor)  # expect: TML007

    def __call__(self, x):
        self._extractor.clear()
        self._encoder(x.to(self._device))
        features = {layer: self._extractor.outputs[i]
                    for i, layer in enumerate(self._layers)}
        if self._detach:
            features = {k: v.detach().cpu().numpy() for k, v in features.items()}
        return features


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


def reconstruct_all(encoder, layers, targets):
    encoder.eval()
    return [reconstruct(t, encoder, layers) for t in targets]
