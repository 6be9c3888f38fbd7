# Source: https://github.com/moskomule/anatome/issues/21
# Report: (hook class as in anatome 420de3d anatome/distance.py DistanceHook) a meta-learning user computing PWCCA distances between the meta-model and its adapted copy asked whether anatome's hooks have side effects when created repeatedly; the hook class registers a forward hook in __init__ and never keeps the handle, so every hook object ever built stays attached and keeps storing that layer's outputs
# Shape: the meta-training loop builds two SimilarityHook objects on the live models at every log step; SimilarityHook (same module) calls register_forward_hook on the persistent layer and drops the handle, so hooks, their closures and their stored outputs pile up step after step
# Expect: TML007 line 76; TML007 line 77
from functools import partial
from typing import Callable, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from anatome.distance import pwcca_distance


class SimilarityHook(object):
    _supported_dim = (2, 4)

    def __init__(self, model: nn.Module, name: str, distance_func: Optional[Callable] = None) -> None:
        self.model = model
        self.module = {k: v for k, v in self.model.named_modules()}[name]
        self.cca_function = distance_func or partial(pwcca_distance, backend="svd")
        self.name = name
        self.device = None
        self._hooked = []
        self._register_hook()

    def _register_hook(self) -> None:
        def hook(module, inputs, output):
            if output.dim() not in self._supported_dim:
                raise RuntimeError(f"SimilarityHook supports {self._supported_dim}, got {output.dim()}")
            self.device = output.device
            # store intermediate tensors on CPU to avoid possible CUDA OOM
            self._hooked.append(output.cpu())

        self.module.register_forward_hook(hook)

    @property
    def hooked_tensors(self) -> torch.Tensor:
        if not self._hooked:
            raise RuntimeError("Run model in advance")
        return torch.cat(self._hooked, dim=0)

    def distance(self, other: "SimilarityHook", size: Optional[int] = None) -> float:
        x = self.hooked_tensors.to(self.device)
        y = other.hooked_tensors.to(self.device)
        if x.dim() == 4:
            if size is not None:
                x, y = F.adaptive_avg_pool2d(x, size), F.adaptive_avg_pool2d(y, size)
            x, y = x.flatten(1), y.flatten(1)
        return float(self.cca_function(x, y))


def inner_adapt(adapted_model, base_model, spt_x, spt_y, inner_lr, steps):
    adapted_model.load_state_dict(base_model.state_dict())
    adapted_model.train()
    inner_opt = torch.optim.SGD(adapted_model.parameters(), lr=inner_lr)
    for _ in range(steps):
        inner_opt.zero_grad()
        F.cross_entropy(adapted_model(spt_x), spt_y).backward()
        inner_opt.step()
    return adapted_model


def meta_train(args, base_model, adapted_model, meta_opt, meta_loader, log):
    for it, batch in enumerate(meta_loader):
        spt_x, spt_y, qry_x, qry_y = (t.to(args.device) for t in batch)
        inner_adapt(adapted_model, base_model, spt_x, spt_y, args.inner_lr, args.nb_inner_steps)
        # first-order (Reptile-style) meta step: move the meta-model towards the adapted weights
        meta_opt.zero_grad()
        for p, q in zip(base_model.parameters(), adapted_model.parameters()):
            p.grad = p.data - q.data
        meta_opt.step()

        if it % args.log_freq == 0:
            base_model.eval()
            adapted_model.eval()
            hook1 = SimilarityHook(base_model, args.layer_name)  # expect: TML007
            hook2 = SimilarityHook(adapted_model, args.layer_name)  # expect: TML007
            with torch.no_grad():
                base_model(qry_x)
                adapted_model(qry_x)
            dist = hook1.distance(hook2, size=args.downsample_size)
            log({"it": it, "pwcca_dist": dist})
        if it >= args.num_its:
            break
