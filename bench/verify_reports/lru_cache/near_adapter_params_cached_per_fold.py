# Source: https://github.com/meta-pytorch/torchtune/issues/904
# Report: the fix removes the cache from the helper.
# Shape: the same folds with an uncached helper.
# Expect: near-miss: must be silent
import functools

import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


def get_adapter_params(model):
    return {name: p for name, p in model.named_parameters() if "adapter" in name}


class AdaptedModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.base = nn.Linear(32, 32).requires_grad_(False)
        self.adapter = nn.Linear(32, 32)


for fold in range(24):
    model = AdaptedModel().to(device)
    optimizer = torch.optim.SGD(get_adapter_params(model).values(), lr=0.1)
    loss = model.adapter(model.base(torch.randn(8, 32, device=device))).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(len(get_adapter_params(model)))
