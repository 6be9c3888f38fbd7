# Modelled on: https://github.com/kuprel/min-dalle/pull/24
# Report: the context manager must wrap the computation; a bare call creates the object and throws it away.
from torch import enable_grad, inference_mode


class Predictor:
    def __init__(self, model):
        self.model = model.eval()

    def __call__(self, batches):
        inference_mode()  # expect: TML014
        return [self.model(b).argmax(-1) for b in batches]

    def saliency(self, x):
        enable_grad()  # expect: TML014
        x = x.clone().requires_grad_(True)
        self.model(x).max().backward()  # expect: TML020
        return x.grad
