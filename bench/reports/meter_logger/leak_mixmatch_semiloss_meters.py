# Source: https://github.com/YU1ut/MixMatch-pytorch/blob/1492d71ff6e562c5051f201413053f9f92bd3108/train.py
# Report: MixMatch training step one edit away: the unsupervised consistency loss Lu is handed to its AverageMeter as a tensor (its .avg still prints with :.4f)
# Shape: AverageMeter.update does self.val = val and self.sum += val * n on a meter living all epoch: sum becomes a tensor whose history chains every step's Lu node, so live memory and the autograd node count grow each iteration
# Expect: TML001 line 75
import numpy as np
import torch
import torch.nn.functional as F


class AverageMeter(object):
    def __init__(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def linear_rampup(current, rampup_length=1024):
    return float(np.clip(current / rampup_length, 0.0, 1.0))


class SemiLoss(object):
    def __call__(self, outputs_x, targets_x, outputs_u, targets_u, epoch, lambda_u=75):
        probs_u = torch.softmax(outputs_u, dim=1)
        Lx = -torch.mean(torch.sum(F.log_softmax(outputs_x, dim=1) * targets_x, dim=1))
        Lu = torch.mean((probs_u - targets_u) ** 2)
        return Lx, Lu, lambda_u * linear_rampup(epoch)


def train(labeled_iter, unlabeled_iter, model, optimizer, ema_optimizer, criterion, epoch, args):
    losses = AverageMeter()
    losses_x = AverageMeter()
    losses_u = AverageMeter()
    ws = AverageMeter()
    model.train()
    for batch_idx in range(args.val_iteration):
        inputs_x, targets_x = next(labeled_iter)
        (inputs_u, inputs_u2), _ = next(unlabeled_iter)
        batch_size = inputs_x.size(0)
        targets_x = torch.zeros(batch_size, 10).scatter_(1, targets_x.view(-1, 1).long(), 1)
        inputs_x, targets_x = inputs_x.cuda(), targets_x.cuda(non_blocking=True)
        inputs_u, inputs_u2 = inputs_u.cuda(), inputs_u2.cuda()

        with torch.no_grad():
            outputs_u = model(inputs_u)
            outputs_u2 = model(inputs_u2)
            p = (torch.softmax(outputs_u, dim=1) + torch.softmax(outputs_u2, dim=1)) / 2
            pt = p ** (1 / args.T)
            targets_u = (pt / pt.sum(dim=1, keepdim=True)).detach()

        all_inputs = torch.cat([inputs_x, inputs_u, inputs_u2], dim=0)
        all_targets = torch.cat([targets_x, targets_u, targets_u], dim=0)
        lam = np.random.beta(args.alpha, args.alpha)
        lam = max(lam, 1 - lam)
        idx = torch.randperm(all_inputs.size(0))
        mixed_input = lam * all_inputs + (1 - lam) * all_inputs[idx]
        mixed_target = lam * all_targets + (1 - lam) * all_targets[idx]

        logits = [model(chunk) for chunk in torch.split(mixed_input, batch_size)]
        logits_x = logits[0]
        logits_u = torch.cat(logits[1:], dim=0)

        Lx, Lu, w = criterion(logits_x, mixed_target[:batch_size], logits_u, mixed_target[batch_size:],
                              epoch + batch_idx / args.val_iteration)
        loss = Lx + w * Lu

        losses.update(loss.item(), inputs_x.size(0))
        losses_x.update(Lx.item(), inputs_x.size(0))
        losses_u.update(Lu, inputs_x.size(0))  # expect: TML001
        ws.update(w, inputs_x.size(0))

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema_optimizer.step()

    return losses.avg, losses_x.avg, losses_u.avg
