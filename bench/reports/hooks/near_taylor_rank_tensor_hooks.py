# Source: https://github.com/jacobgil/pytorch-pruning/blob/eb1b7a6d4222c7d0a884183983b274f1aa06fc7f/finetune.py
# Report: audit (correct code): FilterPrunner.forward(), run once per batch while ranking filters, calls x.register_hook(self.compute_rank) on each conv activation and appends it to self.activations, but the hooks sit on tensors created in that batch and the list is rebuilt at the top of every forward
# Shape: kept as the repo has it: per-batch tensor hooks on fresh activations, activations list reset per call, ranks accumulated from .data (detached) into a dict
# Expect: near-miss: must be silent
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

    def forward(self, x):
        self.activations = []
        self.grad_index = 0
        self.activation_to_layer = {}
        conv_idx = 0
        for layer, (name, module) in enumerate(self.model.features._modules.items()):
            x = module(x)
            if isinstance(module, nn.Conv2d):
                x.register_hook(self.compute_rank)
                self.activations.append(x)
                self.activation_to_layer[conv_idx] = layer
                conv_idx += 1
        return self.model.classifier(x.view(x.size(0), -1))

    def compute_rank(self, grad):
        idx = len(self.activations) - self.grad_index - 1
        act = self.activations[idx]
        taylor = (act * grad).mean(dim=(0, 2, 3)).data
        if idx not in self.filter_ranks:
            self.filter_ranks[idx] = torch.zeros(act.size(1), device=act.device)
        self.filter_ranks[idx] += taylor
        self.grad_index += 1

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
