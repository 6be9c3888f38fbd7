# Source: https://github.com/kumasento/taylor-pruning/blob/6d6a91ac8be40743f08a54dfa6ff26ab049312b5/taylor_pruning/pruning.py
# Report: Taylor-criterion channel pruning registers activation/gradient hooks on every conv/linear module for each calibration batch; here the clean-up step forgets the handles
# Shape: register_hooks() is called once per batch and the handles it returns are never removed: hooks pile up per batch and each closure keeps its batch's act_map (activations with graphs) alive
# Expect: TML007 lines 25, 26
import functools

import torch
import torch.nn as nn


def save_activation(mod, inp, out, name=None, store=None):
    store[name] = out


def save_gradient(mod, grad_in, grad_out, name=None, store=None):
    store[name] = grad_out[0]


def register_hooks(model, act_map, grad_map):
    handles = {}
    for name, mod in model.named_modules():
        if not isinstance(mod, (nn.Conv2d, nn.Linear)):
            continue
        handles[name] = [
            mod.register_forward_hook(functools.partial(save_activation, name=name, store=act_map)),  # expect: TML007
            mod.register_full_backward_hook(functools.partial(save_gradient, name=name, store=grad_map)),  # expect: TML007
        ]
    return handles


def taylor_score(act, grad):
    if act.dim() == 2:
        act, grad = act[..., None, None], grad[..., None, None]
    with torch.no_grad():
        s = (grad * act).flatten(2).mean(2).abs().mean(0, keepdim=True)
    return s


class Pruner:
    def __init__(self, loader, criterion):
        self.loader = loader
        self.criterion = criterion

    def update_criterion(self, scores, act_map, grad_map, handles):
        for key in grad_map:
            s = taylor_score(act_map[key], grad_map[key]).detach().cpu()
            scores.setdefault(key, []).append(s)
        del act_map, grad_map, handles

    def collect_scores(self, model, use_cuda=True):
        model.train()
        scores = {}
        for x, target in self.loader:
            act_map, grad_map = {}, {}
            handles = register_hooks(model, act_map, grad_map)
            if use_cuda:
                x, target = x.cuda(non_blocking=True), target.cuda(non_blocking=True)
            loss = self.criterion(model(x), target)
            loss.backward()
            self.update_criterion(scores, act_map, grad_map, handles)
        return {k: torch.cat(v, 0).mean(0) for k, v in scores.items()}
