# Source: https://github.com/pytorch/pytorch/pull/149354
# Report: A helper in torch.distributed.checkpoint's state_dict code was wrapped in @functools.cache, which per the PR "would keep 'self' alive", so after the user deleted the model its memory stayed occupied (pytorch issue 149100).
# Shape: a module-level FQN helper is cached with functools.cache (an unbounded lru_cache, closest code TML012) and takes the nn.Module as an argument, so the cache keeps a strong reference to every model passed in, GPU parameters included.
# Expect: TML012 line 12
import functools
from typing import Set

import torch
import torch.nn as nn


@functools.cache  # expect: TML012
def _get_fqns(model: nn.Module, name: str, skip_ddp_prefix: bool = True) -> Set[str]:
    """Map a (possibly wrapped) state_dict key to its fully qualified name(s)."""
    name = name.replace("_checkpoint_wrapped_module.", "")
    if not skip_ddp_prefix:
        return {name}
    fqn_obj_names = []
    curr_obj = model
    for curr_obj_name in name.split("."):
        if isinstance(curr_obj, nn.parallel.DistributedDataParallel) and curr_obj_name == "module":
            curr_obj = curr_obj.module
            continue
        fqn_obj_names.append(curr_obj_name)
        curr_obj = getattr(curr_obj, curr_obj_name)
    return {".".join(fqn_obj_names)}


def get_model_state_dict(model: nn.Module):
    state_dict = {}
    for key, value in model.state_dict().items():
        for fqn in _get_fqns(model, key):
            state_dict[fqn] = value
    return state_dict


def run_trials(model_builders, device="cuda"):
    for i, build in enumerate(model_builders):
        model = build().to(device)
        torch.save(get_model_state_dict(model), f"/tmp/trial_{i}.pt")
        del model
        torch.cuda.empty_cache()
        print(f"trial {i}: {torch.cuda.memory_allocated() / 2**20:.0f} MiB still allocated")
