# Source: https://github.com/Sha-Lab/FEAT/blob/fa66901861f0a58e6fd19905a2c8aefb7cb09981/model/trainer/fsl_trainer.py
# Report: FSLTrainer.train with the episode loss passed to the Averager as loss.item(), like tl1.add(total_loss.item()) next to it
# Shape: the per-epoch Averager still folds every episode into self.v, but it now receives a Python float, so no tensor or graph is chained
# Expect: near-miss: must be silent

import time
import os.path as osp
import numpy as np

import torch
import torch.nn.functional as F

from model.trainer.base import Trainer
from model.trainer.helpers import get_dataloader, prepare_model, prepare_optimizer


class Averager():

    def __init__(self):
        self.n = 0
        self.v = 0

    def add(self, x):
        self.v = (self.v * self.n + x) / (self.n + 1)
        self.n += 1

    def item(self):
        return self.v


def count_acc(logits, label):
    pred = torch.argmax(logits, dim=1)
    if torch.cuda.is_available():
        return (pred == label).type(torch.cuda.FloatTensor).mean().item()
    return (pred == label).type(torch.FloatTensor).mean().item()


class FSLTrainer(Trainer):
    def __init__(self, args):
        super().__init__(args)
        self.train_loader, self.val_loader, self.test_loader = get_dataloader(args)
        self.model, self.para_model = prepare_model(args)
        self.optimizer, self.lr_scheduler = prepare_optimizer(self.model, args)

    def prepare_label(self):
        args = self.args
        label = torch.arange(args.way, dtype=torch.int16).repeat(args.query).type(torch.LongTensor)
        label_aux = torch.arange(args.way, dtype=torch.int8).repeat(args.shot + args.query).type(torch.LongTensor)
        if torch.cuda.is_available():
            label = label.cuda()
            label_aux = label_aux.cuda()
        return label, label_aux

    def train(self):
        args = self.args
        label, label_aux = self.prepare_label()
        for epoch in range(1, args.max_epoch + 1):
            self.train_epoch += 1
            self.model.train()
            if self.args.fix_BN:
                self.model.encoder.eval()

            tl1 = Averager()
            tl2 = Averager()
            ta = Averager()

            start_tm = time.time()
            for batch in self.train_loader:
                self.train_step += 1
                if torch.cuda.is_available():
                    data, gt_label = [_.cuda() for _ in batch]
                else:
                    data, gt_label = batch[0], batch[1]
                data_tm = time.time()
                self.dt.add(data_tm - start_tm)

                logits, reg_logits = self.para_model(data)
                if reg_logits is not None:
                    loss = F.cross_entropy(logits, label)
                    total_loss = loss + args.balance * F.cross_entropy(reg_logits, label_aux)
                else:
                    loss = F.cross_entropy(logits, label)
                    total_loss = F.cross_entropy(logits, label)

                tl2.add(loss.item())
                forward_tm = time.time()
                self.ft.add(forward_tm - data_tm)
                acc = count_acc(logits, label)

                tl1.add(total_loss.item())
                ta.add(acc)

                self.optimizer.zero_grad()
                total_loss.backward()
                backward_tm = time.time()
                self.bt.add(backward_tm - forward_tm)

                self.optimizer.step()
                self.ot.add(time.time() - backward_tm)
                start_tm = time.time()

            self.lr_scheduler.step()
            self.try_evaluate(epoch)
            print('epoch {}, loss={:.4f} acc={:.4f}'.format(epoch, float(tl2.item()), ta.item()))
            print('ETA:{}/{}'.format(
                self.timer.measure(),
                self.timer.measure(self.train_epoch / args.max_epoch)))

        torch.save(self.trlog, osp.join(args.save_path, 'trlog'))
        self.save_model('epoch-last')
