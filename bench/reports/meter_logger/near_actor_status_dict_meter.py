# Source: https://github.com/VISION-SJTU/DiffusionTrack/issues/2
# Report: host memory grew until the process was killed; the actor returned its per-loss dict (tensors) as the logging status, which the trainer fed into AverageMeters every step
# Shape: fixed as in the thread: compute_losses() turns every status entry into a Python float with .item() before the trainer's AverageMeters see it
# Expect: near-miss: must be silent
from collections import OrderedDict

import torch


class AverageMeter(object):
    def __init__(self):
        self.reset()

    def reset(self):
        self.avg, self.val, self.sum, self.count = 0, 0, 0, 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class DiffusionTrackActor:
    def __init__(self, net):
        self.net = net

    def __call__(self, data):
        outputs, new_targets = self.net(data, mode="forward")
        return self.compute_losses(outputs, new_targets)

    def compute_losses(self, outputs, new_targets):
        loss_dict, weight_dict = self.net(outputs=outputs, new_targets=new_targets, mode="compute_loss")
        weighted = {k: loss_dict[k] * weight_dict[k] for k in loss_dict if k in weight_dict}
        losses = sum(weighted.values())
        status = {k: v.item() for k, v in loss_dict.items()}
        status["total_loss"] = losses.clone().detach().item()
        return losses, status


class LTRTrainer:
    def __init__(self, actor, loaders, optimizer, device):
        self.actor, self.loaders, self.optimizer, self.device = actor, loaders, optimizer, device
        self.stats = OrderedDict()

    def cycle_dataset(self, loader):
        torch.set_grad_enabled(loader.training)
        for i, data in enumerate(loader, 1):
            data = data.to(self.device)
            loss, stats = self.actor(data)
            if loader.training:
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            batch_size = data["template_images"].shape[1]
            self._update_stats(stats, batch_size, loader)

    def _update_stats(self, new_stats, batch_size, loader):
        if self.stats.get(loader.name) is None:
            self.stats[loader.name] = OrderedDict({name: AverageMeter() for name in new_stats})
        for name, val in new_stats.items():
            if name not in self.stats[loader.name]:
                self.stats[loader.name][name] = AverageMeter()
            self.stats[loader.name][name].update(val, batch_size)

    def train_epoch(self):
        for loader in self.loaders:
            self.cycle_dataset(loader)
