# Source: https://github.com/huggingface/peft/pull/2761
# Report: X-LoRA registered a new forward pre-hook on every forward step during generate() but removed only the last one, so hooks piled up across generation steps.
# Shape: Each classifier-scaling pass registers a pre-hook per adapter layer and keeps only the latest handle, so earlier hooks (holding the scalings tensor) are never removed.
# Expect: TML007 line 23
import torch
import torch.nn as nn


class XLoraModel(nn.Module):
    def __init__(self, base, classifier, lora_layers):
        super().__init__()
        self.base = base
        self.classifier = classifier
        self.lora_layers = lora_layers
        self._hook_handle = None

    def _set_scalings(self, scalings):
        def pre_hook(module, args, kwargs):
            kwargs["scalings"] = scalings
            return args, kwargs

        for layer in self.lora_layers:
            handle = layer.register_forward_pre_hook(pre_hook, with_kwargs=True)  # expect: TML007
            self._hook_handle = handle

    def forward(self, input_ids, **kwargs):
        with torch.no_grad():
            dummy = self.base(input_ids, output_hidden_states=True, **kwargs)
        scalings = self.classifier(dummy.hidden_states[-1])
        self._set_scalings(scalings)
        out = self.base(input_ids, **kwargs)
        if self._hook_handle is not None:
            self._hook_handle.remove()
        return out

    @torch.no_grad()
    def generate(self, input_ids, max_new_tokens=64):
        b, t = input_ids.shape
        ids = input_ids.new_zeros(b, t + max_new_tokens)
        ids[:, :t] = input_ids
        for step in range(t, t + max_new_tokens):
            logits = self(ids[:, :step]).logits[:, -1]
            ids[:, step] = logits.argmax(-1)
        return ids
