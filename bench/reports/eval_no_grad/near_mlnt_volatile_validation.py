# Source: https://github.com/LiJunnan1992/MLNT/blob/40f163d42b05c990b499a6d1a5539150986ab370/main.py
# Report: MLNT validated with Variable(inputs, volatile=True), a no-op since PyTorch 0.4 (issue #12: OOM, "not compatible with the latest PyTorch"); this is the port that does it right.
# Shape: the val/test forwards run inside torch.no_grad(); train keeps its retain_graph backward followed by the meta backward in the same iteration, and the inner fast-loss sum is backpropagated (intended).
# Expect: near-miss: must be silent
import math
import random
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

criterion = nn.CrossEntropyLoss()
consistent_criterion = nn.KLDivLoss(reduction="batchmean")


def train(net, tch_net, pretrain_net, optimizer, train_loader, args):
    net.train()
    tch_net.train()
    train_loss = 0.0
    for batch_idx, (inputs, targets) in enumerate(train_loader):
        inputs, targets = inputs.cuda(), targets.cuda()
        optimizer.zero_grad()
        outputs = net(inputs)
        class_loss = criterion(outputs, targets)
        class_loss.backward(retain_graph=True)

        for p, p_tch in zip(net.parameters(), tch_net.parameters()):
            p_tch.data.mul_(args.eps).add_(p.data, alpha=1 - args.eps)

        _, feats = pretrain_net(inputs, get_feat=True)
        p_tch = F.softmax(tch_net(inputs), dim=1).detach()

        for i in range(args.num_fast):
            targets_fast = targets.clone()
            perm = torch.randperm(targets.size(0))
            for n in range(int(targets.size(0) * args.perturb_ratio)):
                idx = perm[n]
                dist = torch.sum((feats[idx].unsqueeze(0) - feats) ** 2, dim=1)
                _, neighbor = torch.topk(dist.data, 11, largest=False)
                targets_fast[idx] = targets[neighbor[random.randint(1, 10)]]

            fast_loss = criterion(outputs, targets_fast)
            grads = torch.autograd.grad(fast_loss, net.parameters(), create_graph=True, retain_graph=True)
            fast_weights = OrderedDict(
                (name, param - args.meta_lr * g) for ((name, param), g) in zip(net.named_parameters(), grads)
            )
            logp_fast = F.log_softmax(net.forward(inputs, fast_weights), dim=1)
            if i == 0:
                consistent_loss = consistent_criterion(logp_fast, p_tch)
            else:
                consistent_loss = consistent_loss + consistent_criterion(logp_fast, p_tch)

        meta_loss = consistent_loss * args.alpha / args.num_fast
        meta_loss.backward()
        optimizer.step()
        train_loss += class_loss.item()
    return train_loss / (batch_idx + 1)


def score(outputs, targets):
    _, predicted = torch.max(outputs.data, 1)
    return predicted.eq(targets.data).cpu().sum().item()


def val(net, val_loader, record):
    net.eval()
    val_loss = 0.0
    correct = 0
    total = 0
    for batch_idx, (inputs, targets) in enumerate(val_loader):
        inputs, targets = inputs.cuda(), targets.cuda()
        with torch.no_grad():
            outputs = net(inputs)
            loss = criterion(outputs, targets)
        val_loss += loss.item()
        correct += score(outputs, targets)
        total += targets.size(0)
    acc = 100.0 * correct / total
    record.write("val acc: %.2f\n" % acc)
    return acc


def test(test_net, test_loader, record):
    test_net.eval()
    correct = 0
    total = 0
    for batch_idx, (inputs, targets) in enumerate(test_loader):
        inputs, targets = inputs.cuda(), targets.cuda()
        with torch.no_grad():
            outputs = test_net(inputs)
        correct += score(outputs, targets)
        total += targets.size(0)
    acc = 100.0 * correct / total
    record.write("test acc: %.2f\n" % acc)
    return acc
