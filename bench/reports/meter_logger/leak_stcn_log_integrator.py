# Source: https://github.com/hkchengrex/STCN/blob/eb83102e1957d9f21fb268ab202dad72ef06a1b0/util/log_integrator.py
# Report: STCN's Integrator reduces every logged loss with tensor.mean().item(); this variant keeps the tensor "to avoid a sync per step"
# Shape: do_pass() hands the loss dict (total_loss, loss_1, loss_2 carry the graph) to self.integrator.add_dict -> add_tensor does self.values[k] += v.mean(): graphs chain until finalize/reset
# Expect: TML001 line 94
from collections import defaultdict

import torch
import torch.nn.functional as F


class Integrator:
    """Sums numerical values over report_interval iterations for logging."""

    def __init__(self, logger):
        self.values = {}
        self.counts = {}
        self.hooks = []
        self.logger = logger

    def add_tensor(self, key, tensor):
        if key not in self.values:
            self.counts[key] = 1
            if isinstance(tensor, (int, float)):
                self.values[key] = tensor
            else:
                self.values[key] = tensor.mean()
        else:
            self.counts[key] += 1
            if isinstance(tensor, (int, float)):
                self.values[key] += tensor
            else:
                self.values[key] += tensor.mean()

    def add_dict(self, tensor_dict):
        for k, v in tensor_dict.items():
            self.add_tensor(k, v)

    def add_hook(self, hook):
        self.hooks.extend(hook if isinstance(hook, list) else [hook])

    def reset_except_hooks(self):
        self.values = {}
        self.counts = {}

    def finalize(self, prefix, it):
        for hook in self.hooks:
            k, v = hook(self.values)
            self.add_tensor(k, v)
        for k, v in self.values.items():
            if k.startswith("hide"):
                continue
            self.logger.log_metrics(prefix, k, float(v / self.counts[k]), it)


def compute_losses(data, out):
    losses = defaultdict(int)
    b, s = data["gt"].shape[:2]
    for i in range(1, s):
        ce = F.cross_entropy(out["logits_%d" % i], data["cls_gt"][:, i])
        losses["loss_%d" % i] += ce
        losses["total_loss"] += ce
        inter = ((out["mask_%d" % i] > 0.5) & (data["gt"][:, i] > 0.5)).float().sum()
        union = ((out["mask_%d" % i] > 0.5) | (data["gt"][:, i] > 0.5)).float().sum()
        losses["hide_iou/i"] += inter
        losses["hide_iou/u"] += union
    return losses


class VOSTrainer:
    def __init__(self, network, logger, lr=1e-5):
        self.net = network.cuda()
        self.logger = logger
        self.integrator = Integrator(logger)
        self.integrator.add_hook(lambda v: ("iou/iou", (v["hide_iou/i"] + 1) / (v["hide_iou/u"] + 1)))
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=lr, weight_decay=1e-7)
        self.report_interval = 100
        self._is_train = True

    def do_pass(self, data, it=0):
        torch.set_grad_enabled(self._is_train)
        for k, v in data.items():
            if torch.is_tensor(v):
                data[k] = v.cuda(non_blocking=True)

        out = {}
        k16, kf16, kf8, kf4 = self.net("encode_key", data["rgb"])
        ref_v = self.net("encode_value", data["rgb"][:, 0], kf16[:, 0], data["gt"][:, 0])
        out["logits_1"], out["mask_1"] = self.net("segment", k16[:, :, 1], kf8[:, 1], kf4[:, 1], k16[:, :, 0:1], ref_v)
        prev_v = self.net("encode_value", data["rgb"][:, 1], kf16[:, 1], out["mask_1"])
        values = torch.cat([ref_v, prev_v], 2)
        out["logits_2"], out["mask_2"] = self.net("segment", k16[:, :, 2], kf8[:, 2], kf4[:, 2], k16[:, :, 0:2], values)

        losses = compute_losses(data, out)
        self.integrator.add_dict(losses)  # expect: TML001

        if it % self.report_interval == 0 and it != 0:
            self.integrator.finalize("train", it)
            self.integrator.reset_except_hooks()

        self.optimizer.zero_grad(set_to_none=True)
        losses["total_loss"].backward()
        self.optimizer.step()


def train(trainer, train_loader, total_epoch):
    total_iter = 0
    for e in range(total_epoch):
        for data in train_loader:
            trainer.do_pass(data, total_iter)
            total_iter += 1
