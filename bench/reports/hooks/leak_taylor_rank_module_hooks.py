# Source: https://github.com/jacobgil/pytorch-pruning/blob/eb1b7a6d4222c7d0a884183983b274f1aa06fc7f/finetune.py
# Report: audit (correct code): FilterPrunner.forward(), run once per batch while ranking filters, hooks the activation tensors of that batch; this is the variant it avoids, where the gradient hook goes on the persistent conv module inside the per-batch forward
# Shape: the ranker's per-batch forward calls module.register_backward_hook(...) on every conv layer and never removes it, so each ranking batch adds one more hook per layer (and every old hook re-adds its Taylor score)
# Expect: TML007 line 35
from heapq import nsmallest
from operator import itemgetter

import torch
import torch.nn as nn


class FilterRanker:
    def __init__(self, model):
        self.model = model
        self.reset()

    def reset(self):
        self.filter_ranks = {}

    def make_hook(self, idx):
        def hook(module, grad_input, grad_output):
            act = self.activations[idx]
            taylor = (act * grad_output[0]).mean(dim=(0, 2, 3)).data
            if idx not in self.filter_ranks:
                self.filter_ranks[idx] = torch.zeros(act.size(1), device=act.device)
            self.filter_ranks[idx] += taylor
        return hook

    def forward(self, x):
        self.activations = []
        self.activation_to_layer = {}
        conv_idx = 0
        for layer, (name, module) in enumerate(self.model.features._modules.items()):
            if isinstance(module, nn.Conv2d):
                module.register_backward_hook(self.make_hook(conv_idx))  # expect: TML007
            x = module(x)
            if isinstance(module, nn.Conv2d):
                self.activations.append(x)
                self.activation_to_layer[conv_idx] = layer
                conv_idx += 1
        return self.model.classifier(x.view(x.size(0), -1))

    def normalize_ranks_per_layer(self):
        for i, v in self.filter_ranks.items():
            v = v.abs()
            self.filter_ranks[i] = (v / torch.sqrt((v * v).sum())).cpu()

    def lowest_ranking_filters(self, num):
        data = []
        for i in sorted(self.filter_ranks):
            for j in range(self.filter_ranks[i].size(0)):
                data.append((self.activation_to_layer[i], j, float(self.filter_ranks[i][j])))
        return nsmallest(num, data, itemgetter(2))


def rank_filters(model, loader, num_to_prune, device="cuda"):
    ranker = FilterRanker(model)
    criterion = nn.CrossEntropyLoss()
    model.train()
    ranker.reset()
    for batch, label in loader:
        batch, label = batch.to(device), label.to(device)
        model.zero_grad()
        output = ranker.forward(batch)
        criterion(output, label).backward()
    ranker.normalize_ranks_per_layer()
    return ranker.lowest_ranking_filters(num_to_prune)
