# Source: https://github.com/wgcban/ChangeFormer/blob/2c0454fe33d9543d7a850962f525769954ea6d75/models/trainer.py
# Report: remote-sensing change-detection trainer resuming from last_ckpt.pt with the map_location argument dropped (one edit from the repository's _load_checkpoint)
# Shape: torch.load restores the saved CUDA tensors (model and SGD momentum) on the GPU they were saved from before load_state_dict copies them to self.device: a spike on that GPU at resume
# Expect: TML011 line 43
import os

import numpy as np
import torch
import torch.optim as optim


class ConfuseMatrixMeter:
    def __init__(self, n_class):
        self.n_class = n_class
        self.clear()

    def clear(self):
        self.cm = np.zeros((self.n_class, self.n_class), dtype=np.int64)

    def update_cm(self, pr, gt):
        idx = gt.reshape(-1) * self.n_class + pr.reshape(-1)
        self.cm += np.bincount(idx, minlength=self.n_class ** 2).reshape(self.n_class, self.n_class)
        return float(np.diag(self.cm).sum() / max(self.cm.sum(), 1))


class CDTrainer:
    def __init__(self, net_G, pxl_loss, dataloaders, args):
        self.dataloaders = dataloaders
        self.device = torch.device("cuda:%s" % args.gpu_ids[0] if torch.cuda.is_available() else "cpu")
        self.net_G = net_G.to(self.device)
        self.optimizer_G = optim.SGD(self.net_G.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
        self.scheduler_G = optim.lr_scheduler.StepLR(self.optimizer_G, step_size=100, gamma=0.1)
        self.running_metric = ConfuseMatrixMeter(n_class=2)
        self._pxl_loss = pxl_loss
        self.checkpoint_dir = args.checkpoint_dir
        self.max_num_epochs = args.max_epochs
        self.epoch_to_start, self.best_val_acc, self.best_epoch_id = 0, 0.0, 0
        self.G_pred = self.G_loss = self.batch = None

    def _load_checkpoint(self, ckpt_name='last_ckpt.pt'):
        path = os.path.join(self.checkpoint_dir, ckpt_name)
        if os.path.exists(path):
            checkpoint = torch.load(path)  # expect: TML011
            self.net_G.load_state_dict(checkpoint['model_G_state_dict'])
            self.optimizer_G.load_state_dict(checkpoint['optimizer_G_state_dict'])
            self.scheduler_G.load_state_dict(checkpoint['exp_lr_scheduler_G_state_dict'])
            self.net_G.to(self.device)
            self.epoch_to_start = checkpoint['epoch_id'] + 1
            self.best_val_acc = checkpoint['best_val_acc']
            self.best_epoch_id = checkpoint['best_epoch_id']
        else:
            print('training from scratch...')

    def _forward_pass(self, batch):
        self.batch = batch
        self.G_pred = self.net_G(batch['A'].to(self.device), batch['B'].to(self.device))

    def _backward_G(self):
        gt = self.batch['L'].to(self.device).long()
        self.G_loss = self._pxl_loss(self.G_pred, gt)
        self.G_loss.backward()

    def _update_metric(self):
        target = self.batch['L'].to(self.device).detach()
        G_pred = torch.argmax(self.G_pred.detach(), dim=1)
        return self.running_metric.update_cm(pr=G_pred.cpu().numpy(), gt=target.cpu().numpy())

    def train_models(self):
        self._load_checkpoint()
        for self.epoch_id in range(self.epoch_to_start, self.max_num_epochs):
            self.running_metric.clear()
            self.net_G.train()
            for self.batch_id, batch in enumerate(self.dataloaders['train']):
                self._forward_pass(batch)
                self.optimizer_G.zero_grad()
                self._backward_G()
                self.optimizer_G.step()
                acc = self._update_metric()
                if self.batch_id % 100 == 1:
                    print(f"[{self.epoch_id}][{self.batch_id}] G_loss {self.G_loss.item():.5f} acc {acc:.5f}")
            self.scheduler_G.step()

            self.running_metric.clear()
            self.net_G.eval()
            for self.batch_id, batch in enumerate(self.dataloaders['val']):
                with torch.no_grad():
                    self._forward_pass(batch)
                acc = self._update_metric()
            if acc > self.best_val_acc:
                self.best_val_acc, self.best_epoch_id = acc, self.epoch_id
