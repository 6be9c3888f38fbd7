# Source: https://github.com/chenxin-dlut/TransT/blob/a547b587b71823420e60adfaaa32b5e7ad284273/ltr/actors/tracking.py
# Report: audited idiom: TranstActor returns its per-batch stats dict as .item() floats, which LTRTrainer._update_stats feeds into AverageMeter objects that live for the whole epoch
# Shape: as in the repository: every stat is converted with .item() in the actor before it reaches AverageMeter.update, so the meters only hold Python floats
# Expect: near-miss: must be silent
from collections import OrderedDict

import torch


class AverageMeter(object):
    """Computes and stores the average and current value"""
    def __init__(self):
        self.history = []
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def new_epoch(self):
        if self.count > 0:
            self.history.append(self.avg)
            self.reset()

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class TranstActor:
    def __init__(self, net, objective):
        self.net = net
        self.objective = objective

    def __call__(self, data):
        outputs = self.net(data['search_images'], data['template_images'])
        loss_dict = self.objective(outputs, data['targets'])
        weight_dict = self.objective.weight_dict
        losses = sum(loss_dict[k] * weight_dict[k] for k in loss_dict.keys() if k in weight_dict)
        stats = {'Loss/total': losses.item(),
                 'Loss/ce': loss_dict['loss_ce'].item(),
                 'Loss/bbox': loss_dict['loss_bbox'].item(),
                 'Loss/giou': loss_dict['loss_giou'].item(),
                 'iou': loss_dict['iou'].item()}
        return losses, stats


class LTRTrainer:
    def __init__(self, actor, loaders, optimizer, device):
        self.actor = actor
        self.loaders = loaders
        self.optimizer = optimizer
        self.device = device
        self.stats = OrderedDict({loader.name: None for loader in self.loaders})

    def cycle_dataset(self, loader):
        self.actor.net.train(loader.training)
        torch.set_grad_enabled(loader.training)
        for i, data in enumerate(loader, 1):
            data = data.to(self.device)
            loss, stats = self.actor(data)
            if loader.training:
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            batch_size = data['search_images'].shape[loader.stack_dim]
            self._update_stats(stats, batch_size, loader)

    def _update_stats(self, new_stats, batch_size, loader):
        if self.stats[loader.name] is None:
            self.stats[loader.name] = OrderedDict({name: AverageMeter() for name in new_stats.keys()})
        for name, val in new_stats.items():
            if name not in self.stats[loader.name].keys():
                self.stats[loader.name][name] = AverageMeter()
            self.stats[loader.name][name].update(val, batch_size)

    def train_epoch(self):
        for loader in self.loaders:
            self.cycle_dataset(loader)
        for loader_stats in self.stats.values():
            if loader_stats is None:
                continue
            for stat_value in loader_stats.values():
                stat_value.new_epoch()
