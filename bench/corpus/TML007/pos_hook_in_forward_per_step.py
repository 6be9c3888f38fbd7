# Modelled on: https://github.com/huggingface/peft/pull/2761
# Report: forward hooks accumulated during generation: one hook was registered per forward step and only the last one was removed.
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

        for layer in self.base.layers:
            layer.register_forward_hook(scale_hook)  # expect: TML007
        return self.base(input_ids, **kwargs)
