# Source: https://github.com/ifzhang/FairMOT/blob/213e9e20e788324a75154349d158fe27916de4db/src/lib/trains/base_trainer.py
# Report: FairMOT's run_epoch as written: every entry of the loss_stats dict reaches its AverageMeter as loss_stats[l].mean().item()
# Shape: MotLoss returns (loss, {name: graph-attached tensor}); .item() turns each stat into a Python float before AverageMeter.update does self.sum += val * n, so no graph outlives the step
# Expect: near-miss: must be silent
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class AverageMeter(object):
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class MotLoss(nn.Module):
    def __init__(self, emb_dim, nID):
        super().__init__()
        self.classifier = nn.Linear(emb_dim, nID)
        self.s_det = nn.Parameter(-1.85 * torch.ones(1))
        self.s_id = nn.Parameter(-1.05 * torch.ones(1))

    def forward(self, outputs, batch):
        out = outputs[-1]
        hm_loss = F.mse_loss(out['hm'].sigmoid(), batch['hm'])
        wh_loss = F.l1_loss(out['wh'], batch['wh'])
        id_loss = F.cross_entropy(self.classifier(out['id']), batch['ids'])
        det_loss = hm_loss + 0.1 * wh_loss
        loss = torch.exp(-self.s_det) * det_loss + torch.exp(-self.s_id) * id_loss + (self.s_det + self.s_id)
        loss = loss * 0.5
        loss_stats = {'loss': loss, 'hm_loss': hm_loss, 'wh_loss': wh_loss, 'id_loss': id_loss}
        return loss, loss_stats


class ModelWithLoss(nn.Module):
    def __init__(self, model, loss):
        super().__init__()
        self.model = model
        self.loss = loss

    def forward(self, batch):
        outputs = self.model(batch['input'])
        loss, loss_stats = self.loss(outputs, batch)
        return outputs[-1], loss, loss_stats


class MotTrainer(object):
    def __init__(self, opt, model, optimizer):
        self.opt = opt
        self.optimizer = optimizer
        self.loss_stats = ['loss', 'hm_loss', 'wh_loss', 'id_loss']
        self.loss = MotLoss(opt.reid_dim, opt.nID)
        self.model_with_loss = ModelWithLoss(model, self.loss).to(opt.device)
        self.optimizer.add_param_group({'params': self.loss.parameters()})

    def run_epoch(self, epoch, data_loader):
        self.model_with_loss.train()
        avg_loss_stats = {l: AverageMeter() for l in self.loss_stats}
        end = time.time()
        for iter_id, batch in enumerate(data_loader):
            for k in batch:
                if k != 'meta':
                    batch[k] = batch[k].to(device=self.opt.device, non_blocking=True)
            output, loss, loss_stats = self.model_with_loss(batch)
            loss = loss.mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            suffix = '[{}][{}] {:.2f}s'.format(epoch, iter_id, time.time() - end)
            for l in avg_loss_stats:
                avg_loss_stats[l].update(loss_stats[l].mean().item(), batch['input'].size(0))
                suffix += '|{} {:.4f} '.format(l, avg_loss_stats[l].avg)
            if iter_id % self.opt.print_iter == 0:
                print(suffix)
            end = time.time()
            del output, loss, loss_stats, batch
        return {k: v.avg for k, v in avg_loss_stats.items()}
