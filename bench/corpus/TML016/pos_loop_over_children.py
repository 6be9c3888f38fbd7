# Modelled on: https://github.com/pytorch/pytorch/issues/9241
# Report: "how do I freeze whole module with simple code"; the answer is to set requires_grad on its parameters.
import torch.nn as nn


def freeze_stem(net: nn.Module, n_blocks: int = 2):
    for block in list(net.children())[:n_blocks]:
        block.requires_grad = False  # expect: TML016
    return net
