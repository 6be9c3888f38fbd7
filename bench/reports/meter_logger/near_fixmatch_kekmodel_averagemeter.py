# Source: https://github.com/kekmodel/FixMatch-pytorch/blob/037b4461c16747971d2c52faacbcd3afb563ea22/train.py
# Report: audited correct idiom: FixMatch train() feeds losses.update(loss.item()) (and Lx/Lu .item()) into the pytorch/examples AverageMeter after backward; this near-miss is that code.
# Shape: the AverageMeter (utils/misc.py in the repository) is defined here; update() does self.sum += val * n, but every value handed to it is a Python float from .item().
# Expect: near-miss: must be silent
import time

import torch
import torch.nn.functional as F
from copy import deepcopy


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


class ModelEMA(object):
    def __init__(self, model, decay):
        self.ema = deepcopy(model)
        self.ema.eval()
        self.decay = decay
        for p in self.ema.parameters():
            p.requires_grad_(False)

    def update(self, model):
        with torch.no_grad():
            msd = model.state_dict()
            for k, ema_v in self.ema.state_dict().items():
                model_v = msd[k].detach()
                ema_v.copy_(ema_v * self.decay + (1. - self.decay) * model_v)


def train(args, labeled_trainloader, unlabeled_trainloader,
          model, optimizer, ema_model, scheduler, epoch):
    batch_time = AverageMeter()
    losses = AverageMeter()
    losses_x = AverageMeter()
    losses_u = AverageMeter()
    end = time.time()

    train_loader = zip(labeled_trainloader, unlabeled_trainloader)
    model.train()
    for batch_idx, (data_x, data_u) in enumerate(train_loader):
        inputs_x, targets_x = data_x
        (inputs_u_w, inputs_u_s), _ = data_u
        batch_size = inputs_x.shape[0]
        inputs = torch.cat((inputs_x, inputs_u_w, inputs_u_s)).to(args.device)
        targets_x = targets_x.to(args.device)
        logits = model(inputs)
        logits_x = logits[:batch_size]
        logits_u_w, logits_u_s = logits[batch_size:].chunk(2)
        del logits

        Lx = F.cross_entropy(logits_x, targets_x, reduction='mean')
        pseudo_label = torch.softmax(logits_u_w.detach_(), dim=-1)
        max_probs, targets_u = torch.max(pseudo_label, dim=-1)
        mask = max_probs.ge(args.threshold).float()
        Lu = (F.cross_entropy(logits_u_s, targets_u, reduction='none') * mask).mean()
        loss = Lx + args.lambda_u * Lu
        loss.backward()

        losses.update(loss.item())
        losses_x.update(Lx.item())
        losses_u.update(Lu.item())

        optimizer.step()
        scheduler.step()
        if args.use_ema:
            ema_model.update(model)
        model.zero_grad()

        batch_time.update(time.time() - end)
        end = time.time()
        mask_prob = mask.mean().item()
        if batch_idx % args.log_every == 0:
            print("Epoch {}. Iter {}. Loss: {:.4f}. Loss_x: {:.4f}. Loss_u: {:.4f}. Mask: {:.2f}".format(
                epoch + 1, batch_idx + 1, losses.avg, losses_x.avg, losses_u.avg, mask_prob))
    return losses.avg, losses_x.avg, losses_u.avg, mask_prob
