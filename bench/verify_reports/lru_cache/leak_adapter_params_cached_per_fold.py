# Source: https://github.com/meta-pytorch/torchtune/issues/904
# Report: during cross-validation every fold started at a higher GPU usage than the previous one; functools.lru_cache on get_adapter_params(model) kept each fold's model and its parameters alive.
# Shape: the cached helper takes the model and returns a dict of its parameters; a new model is built and passed to it in every fold.
# Expect: TML012 line 14
import functools

import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


@functools.lru_cache(maxsize=None)  # expect: TML012
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
print(get_adapter_params.cache_info().currsize)
