# Source: https://github.com/kuanghuei/SCAN/blob/053693f0b7a22db142adfeb3236f56de84c2edd9/evaluation.py
# Report: SCAN image-text matching keeps a LogCollector of AverageMeters (sum += val * n) that the model updates every step; the original logs loss.data[0], a Python number
# Shape: a port logs the raw contrastive loss tensor; LogCollector.update hands it to AverageMeter.update, whose self.sum += val * n chains every step's loss (and graph) into a meter that lives for the whole run
# Expect: TML001 line 62
from collections import OrderedDict

import torch
import torch.nn as nn


class AverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=0):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / (.0001 + self.count)


class LogCollector(object):
    """A collection of logging objects that can change from train to val"""

    def __init__(self):
        self.meters = OrderedDict()

    def update(self, k, v, n=0):
        if k not in self.meters:
            self.meters[k] = AverageMeter()
        self.meters[k].update(v, n)


class SCAN(object):
    def __init__(self, opt, img_enc, txt_enc, criterion):
        self.img_enc = img_enc
        self.txt_enc = txt_enc
        self.criterion = criterion
        self.grad_clip = opt.grad_clip
        params = list(txt_enc.parameters()) + list(img_enc.parameters())
        self.optimizer = torch.optim.Adam(params, lr=opt.learning_rate)
        self.logger = LogCollector()
        self.Eiters = 0

    def forward_emb(self, images, captions, lengths):
        images = images.cuda()
        captions = captions.cuda()
        img_emb = self.img_enc(images)
        cap_emb, cap_lens = self.txt_enc(captions, lengths)
        return img_emb, cap_emb, cap_lens

    def forward_loss(self, img_emb, cap_emb, cap_len):
        loss = self.criterion(img_emb, cap_emb, cap_len)
        self.logger.update('Le', loss, img_emb.size(0))  # expect: TML001
        return loss

    def train_emb(self, images, captions, lengths, ids=None):
        self.Eiters += 1
        self.logger.update('Eit', self.Eiters)
        self.logger.update('lr', self.optimizer.param_groups[0]['lr'])

        img_emb, cap_emb, cap_lens = self.forward_emb(images, captions, lengths)
        self.optimizer.zero_grad()
        loss = self.forward_loss(img_emb, cap_emb, cap_lens)
        loss.backward()
        if self.grad_clip > 0:
            nn.utils.clip_grad_norm_(
                list(self.img_enc.parameters()) + list(self.txt_enc.parameters()),
                self.grad_clip)
        self.optimizer.step()


def train(opt, train_loader, model, epoch):
    train_logger = LogCollector()
    for i, (images, captions, lengths, ids) in enumerate(train_loader):
        model.logger = train_logger
        model.train_emb(images, captions, lengths, ids)
        if model.Eiters % opt.log_step == 0:
            print('Epoch: [{0}][{1}/{2}]\t{e_log}'.format(
                epoch, i, len(train_loader), e_log=str(model.logger.meters)))
