# Source: https://github.com/EleutherAI/DeeperSpeed/pull/34
# Report: the engine's layer hooks kept every hooked layer output (embeddings used for evaluation / probing) on the GPU, which quickly ran out of memory; the fix moves each hooked output to the CPU inside the hook
# Shape: same engine, but the hook detaches and moves each layer output to the CPU before storing it (the fix in the PR)
# Expect: near-miss: must be silent
from collections import defaultdict

import torch
import torch.nn as nn


class EvalEngine:
    def __init__(self, module: nn.Module, device="cuda"):
        self.module = module.to(device)
        self.device = device
        self.hooked_embeddings = defaultdict(list)
        self._handles = []

    def _layers(self):
        return list(self.module.layers) if hasattr(self.module, "layers") else list(self.module.children())

    def register_layer_hooks(self, layer_ids):
        """Record the hidden states of the given layers for every batch that goes through eval_batch."""
        layers = self._layers()
        for idx in layer_ids:
            def _hook(module, inputs, output, idx=idx):
                if isinstance(output, tuple):
                    output = output[0]
                self.hooked_embeddings[idx].append(output.detach().cpu())
            self._handles.append(layers[idx].register_forward_hook(_hook))

    def remove_layer_hooks(self):
        for h in self._handles:
            h.remove()
        self._handles.clear()

    @torch.no_grad()
    def eval_batch(self, batch):
        self.module.eval()
        tokens, labels = (t.to(self.device) for t in batch)
        logits = self.module(tokens)
        loss = nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))
        return loss.item()

    def evaluate(self, data_iter, layer_ids=(0, -1)):
        self.register_layer_hooks(layer_ids)
        losses = [self.eval_batch(batch) for batch in data_iter]
        self.remove_layer_hooks()
        embeddings = {k: torch.cat(v).float() for k, v in self.hooked_embeddings.items()}
        self.hooked_embeddings.clear()
        return sum(losses) / max(len(losses), 1), embeddings
