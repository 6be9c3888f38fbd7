# Modelled on: https://github.com/huggingface/peft/pull/2761
# Report: the fix registers the hooks for one forward call and removes all of them in a try/finally.
import torch.nn as nn


class ScalingsWrapper(nn.Module):
    def __init__(self, base, classifier):
        super().__init__()
        self.base = base
        self.classifier = classifier

    def forward(self, input_ids, **kwargs):
        scalings = self.classifier(input_ids)

        def scale_hook(module, args, output):
            return output * scalings[..., None]

        handles = [layer.register_forward_hook(scale_hook) for layer in self.base.layers]
        try:
            return self.base(input_ids, **kwargs)
        finally:
            for handle in handles:
                handle.remove()
