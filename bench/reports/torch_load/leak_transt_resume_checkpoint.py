# Source: https://github.com/chenxin-dlut/TransT/issues/61
# Report: BaseTrainer.load_checkpoint does `checkpoint_dict = torch.load(path, map_location='cpu')`; a user asked why, and reported that after removing map_location='cpu' resuming an interrupted training run runs out of GPU memory
# Shape: ltr-style trainer resume: the checkpoint (net + optimizer state saved from cuda:0) is deserialised straight back onto the GPU before load_state_dict copies it again
# Expect: TML011 line 43
import glob
import os

import torch


class BaseTrainer:
    def __init__(self, actor, loaders, optimizer, settings, lr_scheduler=None):
        self.actor = actor
        self.loaders = loaders
        self.optimizer = optimizer
        self.settings = settings
        self.lr_scheduler = lr_scheduler
        self.epoch = 0
        self.stats = {}
        self._checkpoint_dir = os.path.join(settings.env.workspace_dir, 'checkpoints')

    def train(self, max_epochs, load_latest=False):
        if load_latest:
            self.load_checkpoint()
        for epoch in range(self.epoch + 1, max_epochs + 1):
            self.epoch = epoch
            self.train_epoch()
            if self.lr_scheduler is not None:
                self.lr_scheduler.step()
            self.save_checkpoint()

    def train_epoch(self):
        raise NotImplementedError

    def load_checkpoint(self, checkpoint=None):
        net = self.actor.net.module if hasattr(self.actor.net, 'module') else self.actor.net
        if checkpoint is None:
            checkpoint_list = sorted(glob.glob('{}/{}/*_ep*.pth.tar'.format(
                self._checkpoint_dir, self.settings.project_path)))
            if not checkpoint_list:
                return False
            checkpoint = checkpoint_list[-1]
        checkpoint_dict = torch.load(checkpoint)  # expect: TML011
        assert type(net).__name__ == checkpoint_dict['net_type'], 'Network is not of correct type.'
        net.load_state_dict(checkpoint_dict['net'])
        self.optimizer.load_state_dict(checkpoint_dict['optimizer'])
        self.epoch = checkpoint_dict['epoch']
        self.stats = checkpoint_dict.get('stats', {})
        if self.lr_scheduler is not None:
            self.lr_scheduler.last_epoch = self.epoch
        return True

    def save_checkpoint(self):
        net = self.actor.net.module if hasattr(self.actor.net, 'module') else self.actor.net
        state = {'epoch': self.epoch,
                 'net_type': type(net).__name__,
                 'net': net.state_dict(),
                 'optimizer': self.optimizer.state_dict(),
                 'stats': self.stats}
        directory = '{}/{}'.format(self._checkpoint_dir, self.settings.project_path)
        os.makedirs(directory, exist_ok=True)
        torch.save(state, '{}/{}_ep{:04d}.pth.tar'.format(directory, type(net).__name__, self.epoch))
