# Source: https://github.com/shoshino3/FedAVG-Pruning/blob/main/fed_avg.py
# Report: fix of FedAvg.test(): the server evaluation loop runs under torch.no_grad(); the per-round register_mask helper clears the old pre-hooks before registering new ones
# Shape: forward passes of the test loop sit inside with torch.no_grad(); pre-hooks re-registered every round on root_model but _clear_masks resets _forward_pre_hooks first, so they never pile up
# Expect: near-miss: must be silent
import copy
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def _mask_pre_hook(masks):
    def pre_hook(module, inputs):
        module.weight.data.mul_(masks[str(module)])
    return pre_hook


def _clear_masks(model):
    for m in model.modules():
        m._forward_pre_hooks = OrderedDict()


def apply_mask(model, masks):
    _clear_masks(model)
    by_name = {str(layer): layer for layer in model.modules()}
    for name in masks:
        by_name[name].register_forward_pre_hook(_mask_pre_hook(masks))


class FedAvgServer:
    def __init__(self, args, model, train_loader, test_loader, mask_fn):
        self.args = args
        self.device = torch.device("cuda")
        self.root_model = model.to(self.device)
        self.train_loader = train_loader
        self.test_loader = test_loader
        self.mask_fn = mask_fn

    def _train_client(self, client_idx):
        model = copy.deepcopy(self.root_model)
        model.train()
        opt = torch.optim.SGD(model.parameters(), lr=self.args.lr, momentum=0.9)
        epoch_loss = 0.0
        for _ in range(self.args.local_epochs):
            for data, target in self.train_loader:
                data, target = data.to(self.device), target.to(self.device)
                opt.zero_grad()
                loss = F.nll_loss(model(data), target)
                loss.backward()
                opt.step()
                epoch_loss += loss.item()
        return model, epoch_loss

    def train(self):
        for rnd in range(self.args.rounds):
            masks = self.mask_fn(self.root_model)
            apply_mask(self.root_model, masks)
            states, losses = [], []
            chosen = np.random.choice(self.args.n_clients, self.args.per_round, replace=False)
            for idx in chosen:
                self.train_loader.sampler.set_client(idx)
                client_model, client_loss = self._train_client(idx)
                states.append(client_model.state_dict())
                losses.append(client_loss)
            avg = copy.deepcopy(states[0])
            for key in avg:
                for s in states[1:]:
                    avg[key] += s[key]
                avg[key] = avg[key] / len(states)
            self.root_model.load_state_dict(avg)
            test_loss, test_acc = self.test()
            print(rnd, sum(losses) / len(losses), test_loss, test_acc)

    def test(self):
        self.root_model.eval()
        total_loss, correct, seen = 0.0, 0, 0
        with torch.no_grad():
            for idx, (data, target) in enumerate(self.test_loader):
                data, target = data.to(self.device), target.to(self.device)
                logits = self.root_model(data)
                loss = F.nll_loss(logits, target)
                total_loss += loss.item()
                correct += (logits.argmax(dim=1) == target).sum().item()
                seen += data.size(0)
        return total_loss / (idx + 1), correct / seen
