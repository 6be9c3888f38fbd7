# Source: https://github.com/TiagoCortinhal/SalsaNext/blob/master/train/tasks/semantic/modules/trainer.py
# Report: SalsaNext Trainer (issue #75 reports GPU memory jumping at the second epoch) logs the per-batch loss through AverageMeter objects; here train_epoch passes the loss tensor instead of loss.item()
# Shape: losses.update(loss, n) runs AverageMeter.update, whose self.sum += val * n chains every batch's graph-attached loss; losses.avg is returned to train() and stored in self.info and the checkpoint
# Expect: TML001 line 89
import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class AverageMeter(object):
    """Computes and stores the average and current value"""

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


def save_checkpoint(to_save, logdir, suffix=""):
    torch.save(to_save, logdir + "/SalsaNext" + suffix)


class Trainer():
    def __init__(self, model, parser, evaluator, loss_w, lovasz, arch, logdir):
        self.model = model.cuda()
        self.parser = parser
        self.evaluator = evaluator
        self.ARCH = arch
        self.log = logdir
        self.criterion = nn.NLLLoss(weight=loss_w).cuda()
        self.ls = lovasz
        self.optimizer = optim.SGD(self.model.parameters(), lr=arch["lr"], momentum=arch["momentum"])
        self.batch_time_t = AverageMeter()
        self.info = {"train_loss": 0, "train_acc": 0, "train_iou": 0, "valid_loss": 0, "valid_iou": 0,
                     "best_val_iou": 0}

    def train(self):
        for epoch in range(self.ARCH["max_epochs"]):
            acc, iou, loss = self.train_epoch(self.parser.get_train_set(), self.model, self.criterion,
                                              self.optimizer, epoch, self.evaluator)
            self.info["train_loss"] = loss
            self.info["train_acc"] = acc
            self.info["train_iou"] = iou
            if epoch % self.ARCH["report_epoch"] == 0:
                acc, iou, loss = self.validate(self.parser.get_valid_set(), self.model, self.criterion, self.evaluator)
                self.info["valid_loss"] = loss
                self.info["valid_iou"] = iou
            if self.info['valid_iou'] > self.info['best_val_iou']:
                self.info['best_val_iou'] = self.info['valid_iou']
                save_checkpoint({'epoch': epoch, 'state_dict': self.model.state_dict(), 'info': self.info},
                                self.log, suffix="_valid_best")

    def train_epoch(self, train_loader, model, criterion, optimizer, epoch, evaluator):
        losses = AverageMeter()
        acc = AverageMeter()
        iou = AverageMeter()
        model.train()
        end = time.time()
        for i, (in_vol, proj_mask, proj_labels) in enumerate(train_loader):
            in_vol = in_vol.cuda()
            proj_labels = proj_labels.cuda().long()
            output = model(in_vol)
            loss_m = criterion(torch.log(output.clamp(min=1e-8)), proj_labels) + self.ls(output, proj_labels)
            optimizer.zero_grad()
            loss_m.backward()
            optimizer.step()

            loss = loss_m.mean()
            with torch.no_grad():
                evaluator.reset()
                argmax = output.argmax(dim=1)
                evaluator.addBatch(argmax, proj_labels)
                accuracy = evaluator.getacc()
                jaccard, class_jaccard = evaluator.getIoU()

            losses.update(loss, in_vol.size(0))  # expect: TML001
            acc.update(accuracy.item(), in_vol.size(0))
            iou.update(jaccard.item(), in_vol.size(0))
            self.batch_time_t.update(time.time() - end)
            end = time.time()
            if i % self.ARCH["report_batch"] == 0:
                print('Epoch: [{0}][{1}/{2}] | Loss {loss.val:.4f} ({loss.avg:.4f}) | '
                      'acc {acc.val:.3f} | IoU {iou.val:.3f}'.format(epoch, i, len(train_loader),
                                                                   loss=losses, acc=acc, iou=iou))
        return acc.avg, iou.avg, losses.avg

    def validate(self, val_loader, model, criterion, evaluator):
        losses = AverageMeter()
        model.eval()
        evaluator.reset()
        with torch.no_grad():
            for i, (in_vol, proj_mask, proj_labels) in enumerate(val_loader):
                in_vol = in_vol.cuda()
                proj_labels = proj_labels.cuda(non_blocking=True).long()
                output = model(in_vol)
                loss = criterion(torch.log(output.clamp(min=1e-8)), proj_labels) + self.ls(output, proj_labels)
                evaluator.addBatch(output.argmax(dim=1), proj_labels)
                losses.update(loss.mean().item(), in_vol.size(0))
            accuracy = evaluator.getacc()
            jaccard, class_jaccard = evaluator.getIoU()
        return accuracy.item(), jaccard.item(), losses.avg
