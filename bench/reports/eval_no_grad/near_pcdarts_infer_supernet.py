# Source: https://github.com/yuhuixu1993/PC-DARTS/issues/16
# Report: the fix posted in the issue: infer() of train_search.py wrapped in torch.no_grad() after volatile=True stopped having any effect
# Shape: the validation loop runs under torch.no_grad(); meters receive .item() floats; the training loop and the architect step keep their backward passes
# Expect: near-miss: must be silent
import logging

import torch
import torch.nn as nn


class AvgrageMeter(object):
    def __init__(self):
        self.reset()

    def reset(self):
        self.avg = 0
        self.sum = 0
        self.cnt = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.cnt += n
        self.avg = self.sum / self.cnt


def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    batch_size = target.size(0)
    _, pred = output.topk(maxk, 1, True, True)
    correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
    return [correct[:k].reshape(-1).float().sum(0).mul_(100.0 / batch_size) for k in topk]


class Architect(object):
    """First-order DARTS: one Adam step on the architecture weights."""

    def __init__(self, model, arch_lr, arch_wd):
        self.model = model
        self.optimizer = torch.optim.Adam(model.arch_parameters(), lr=arch_lr, betas=(0.5, 0.999), weight_decay=arch_wd)

    def step(self, input_valid, target_valid):
        self.optimizer.zero_grad()
        loss = self.model._loss(input_valid, target_valid)
        loss.backward()
        self.optimizer.step()


def train(train_queue, valid_queue, model, architect, criterion, optimizer, epoch, args):
    objs, top1, top5 = AvgrageMeter(), AvgrageMeter(), AvgrageMeter()
    valid_iter = iter(valid_queue)
    for step, (input, target) in enumerate(train_queue):
        model.train()
        n = input.size(0)
        input = input.cuda()
        target = target.cuda(non_blocking=True)

        try:
            input_search, target_search = next(valid_iter)
        except StopIteration:
            valid_iter = iter(valid_queue)
            input_search, target_search = next(valid_iter)
        input_search = input_search.cuda()
        target_search = target_search.cuda(non_blocking=True)

        if epoch >= 15:
            architect.step(input_search, target_search)

        optimizer.zero_grad()
        logits = model(input)
        loss = criterion(logits, target)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
        optimizer.step()

        prec1, prec5 = accuracy(logits, target, topk=(1, 5))
        objs.update(loss.item(), n)
        top1.update(prec1.item(), n)
        top5.update(prec5.item(), n)
        if step % args.report_freq == 0:
            logging.info("train %03d %e %f %f", step, objs.avg, top1.avg, top5.avg)
    return top1.avg, objs.avg


def infer(valid_queue, model, criterion, args):
    objs, top1, top5 = AvgrageMeter(), AvgrageMeter(), AvgrageMeter()
    model.eval()

    with torch.no_grad():
        for step, (input, target) in enumerate(valid_queue):
            input = input.cuda()
            target = target.cuda(non_blocking=True)
            logits = model(input)
            loss = criterion(logits, target)

            prec1, prec5 = accuracy(logits, target, topk=(1, 5))
            n = input.size(0)
            objs.update(loss.item(), n)
            top1.update(prec1.item(), n)
            top5.update(prec5.item(), n)
            if step % args.report_freq == 0:
                logging.info("valid %03d %e %f %f", step, objs.avg, top1.avg, top5.avg)

    return top1.avg, objs.avg


def search(model, train_queue, valid_queue, criterion, optimizer, scheduler, args):
    architect = Architect(model, args.arch_learning_rate, args.arch_weight_decay)
    for epoch in range(args.epochs):
        logging.info("genotype = %s", model.genotype())
        train_acc, train_obj = train(train_queue, valid_queue, model, architect, criterion, optimizer, epoch, args)
        scheduler.step()
        logging.info("train_acc %f", train_acc)
        if args.epochs - epoch <= 1:
            valid_acc, valid_obj = infer(valid_queue, model, criterion, args)
            logging.info("valid_acc %f", valid_acc)
        torch.save(model.state_dict(), args.save_path)
