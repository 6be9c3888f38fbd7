# Source: https://github.com/meta-pytorch/torchtune/issues/904
# Report: without the lru_cache decorator each fold's model is released and GPU usage goes back down between folds.
# Shape: same per-fold loop and helper, not cached.
# Expect: near-miss: must be silent
from typing import Dict

import torch
import torch.nn as nn


def get_adapter_params(model: nn.Module) -> Dict[str, nn.Parameter]:
    return {name: p for name, p in model.named_parameters() if "lora_" in name}


def cross_validate(build_model, folds, train_fold):
    scores = []
    for train_split, val_split in folds:
        model = build_model().cuda()
        adapter_params = get_adapter_params(model)
        for name, p in model.named_parameters():
            p.requires_grad_(name in adapter_params)
        optimizer = torch.optim.AdamW(adapter_params.values(), lr=3e-4)
        scores.append(train_fold(model, optimizer, train_split, val_split))
        del model, optimizer
    return scores
