# Source: https://github.com/brjathu/iTAML/blob/44bde88daa4e5dfdea61c1c5c49402862ed98429/learner_task_itaml.py
# Report: audited bug: iTAML's incremental meta-learner evaluates every session's test loader after model.eval() with no torch.no_grad(); this is the fixed variant (Learner.test)
# Shape: Learner.test as in the repository (AverageMeter fed loss.item(), per-class hit counts) with the whole test loop wrapped in torch.no_grad(), the fix for the missing grad-disabled context
# Expect: near-miss: must be silent
import time

import numpy as np
import torch
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


def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    _, pred = output.topk(maxk, 1, True, True)
    correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
    return [correct[:k].reshape(-1).float().sum(0) * 100.0 / target.size(0) for k in topk]


class Learner():
    def __init__(self, model, args, trainloader, testloader, use_cuda):
        self.model = model
        self.args = args
        self.trainloader = trainloader
        self.testloader = testloader
        self.use_cuda = use_cuda
        self.test_loss = 0.0
        self.test_acc = 0.0

    def test(self, model):
        losses = AverageMeter()
        top1 = AverageMeter()
        class_acc = {}

        # switch to evaluate mode
        model.eval()
        ai = 0
        bi = self.args.class_per_task * (self.args.sess + 1)
        end = time.time()
        with torch.no_grad():
            for batch_idx, (inputs, targets) in enumerate(self.testloader):
                targets_one_hot = torch.FloatTensor(inputs.shape[0], self.args.num_class)
                targets_one_hot.zero_()
                targets_one_hot.scatter_(1, targets[:, None], 1)

                if self.use_cuda:
                    inputs, targets_one_hot, targets = inputs.cuda(), targets_one_hot.cuda(), targets.cuda()

                outputs2, outputs = model(inputs)
                loss = F.binary_cross_entropy_with_logits(outputs[ai:bi], targets_one_hot[ai:bi])
                prec1, _ = accuracy(outputs2.data[:, 0:bi], targets.data, topk=(1, 1))
                losses.update(loss.item(), inputs.size(0))
                top1.update(prec1.item(), inputs.size(0))

                pred = torch.argmax(outputs2[:, 0:bi], 1, keepdim=False).view(1, -1)
                correct = pred.eq(targets.view(1, -1).expand_as(pred)).view(-1)
                for i, p in enumerate(pred.view(-1)):
                    key = int(p.detach().cpu().numpy())
                    if correct[i] == 1:
                        class_acc[key] = class_acc.get(key, 0) + 1
                end = time.time()

        self.test_loss = losses.avg
        self.test_acc = top1.avg
        acc_task = {}
        for i in range(self.args.sess + 1):
            acc_task[i] = 0
            for j in range(self.args.class_per_task):
                hits = class_acc.get(i * self.args.class_per_task + j, 0)
                acc_task[i] += hits / self.args.sample_per_task_testing[i] * 100
        print("\n".join(str(acc_task[k]) for k in acc_task))
        return acc_task
