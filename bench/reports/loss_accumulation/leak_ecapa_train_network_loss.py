# Source: https://github.com/TaoRuijie/ECAPA-TDNN/blob/19dbf5ffafd74ed713e51f51f689f91d79447938/ECAPAModel.py
# Report: ECAPA-TDNN speaker-verification trainer: train_network sums the AAM-softmax loss over the epoch for the progress line and the returned epoch loss; here the sum takes the loss tensor itself (the realistic slip of dropping .detach().cpu().numpy())
# Shape: loss starts as int 0 before the batch loop and becomes a CUDA tensor chained to every batch's AAM-softmax output: each step adds a node holding the previous sum and nloss, so the epoch keeps one graph node and storage per batch
# Expect: TML001 line 62
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    _, pred = output.topk(maxk, 1, True, True)
    correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
    return [correct[:k].reshape(-1).float().sum(0) * (100.0 / target.size(0)) for k in topk]


class AAMsoftmax(nn.Module):
    def __init__(self, n_class, m, s, emb_dim=192):
        super().__init__()
        self.m, self.s = m, s
        self.weight = nn.Parameter(torch.empty(n_class, emb_dim))
        nn.init.xavier_normal_(self.weight, gain=1)
        self.ce = nn.CrossEntropyLoss()

    def forward(self, x, label):
        cosine = F.linear(F.normalize(x), F.normalize(self.weight))
        sine = torch.sqrt((1.0 - cosine * cosine).clamp(0, 1))
        phi = cosine * math.cos(self.m) - sine * math.sin(self.m)
        one_hot = torch.zeros_like(cosine).scatter_(1, label.view(-1, 1), 1)
        output = ((one_hot * phi) + ((1.0 - one_hot) * cosine)) * self.s
        loss = self.ce(output, label)
        prec1 = accuracy(output.detach(), label.detach(), topk=(1,))[0]
        return loss, prec1


class ECAPAModel(nn.Module):
    def __init__(self, encoder, lr, lr_decay, n_class, m, s, test_step):
        super().__init__()
        self.speaker_encoder = encoder.cuda()
        self.speaker_loss = AAMsoftmax(n_class=n_class, m=m, s=s).cuda()
        self.optim = torch.optim.Adam(self.parameters(), lr=lr, weight_decay=2e-5)
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optim, step_size=test_step, gamma=lr_decay)

    def train_network(self, epoch, loader):
        self.train()
        self.scheduler.step(epoch - 1)
        index, top1, loss = 0, 0, 0
        lr = self.optim.param_groups[0]["lr"]
        for num, (data, labels) in enumerate(loader, start=1):
            self.zero_grad()
            labels = torch.LongTensor(labels).cuda()
            speaker_embedding = self.speaker_encoder.forward(data.cuda(), aug=True)
            nloss, prec = self.speaker_loss.forward(speaker_embedding, labels)
            nloss.backward()
            self.optim.step()
            index += len(labels)
            top1 += prec
            loss += nloss  # expect: TML001
            sys.stderr.write(time.strftime("%m-%d %H:%M:%S")
                             + " [%2d] Lr: %5f, Training: %.2f%%, " % (epoch, lr, 100 * (num / len(loader)))
                             + " Loss: %.5f, ACC: %2.2f%% \r" % (loss / num, top1 / index * len(labels)))
            sys.stderr.flush()
        sys.stdout.write("\n")
        return loss / num, lr, top1 / index * len(labels)
