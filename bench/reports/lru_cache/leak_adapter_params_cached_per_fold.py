# Source: https://github.com/meta-pytorch/torchtune/issues/904
# Report: during cross-validation every fold started at a higher GPU usage than the previous one; functools.lru_cache on get_adapter_params(model) kept each fold's model (and its parameters) alive.
# Shape: the cached helper takes the model and returns a dict of its parameters; a new model is built and passed to it in every fold.
# Expect: TML012 line 12
import functools
from typing import Dict

import torch
import torch.nn as nn


@functools.lru_cache()  # expect: TML012
def get_adapter_params(model: nn.Module) -> Dict[str, nn.Parameter]:
    return {name: p for name, p in model.named_parameters() if "lora_" in name}


def set_trainable_params(model: nn.Module, trainable: Dict[str, nn.Parameter]):
    for name, p in model.named_parameters():
        p.requires_grad_(name in trainable)


def cross_validate(build_model, folds, train_fold):
    scores = []
    for train_split, val_split in folds:
        model = build_model().cuda()
        adapter_params = get_adapter_params(model)
        set_trainable_params(model, adapter_params)
        optimizer = torch.optim.AdamW(adapter_params.values(), lr=3e-4)
        scores.append(train_fold(model, optimizer, train_split, val_split))
        del model, optimizer
    return scores
