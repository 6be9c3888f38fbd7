# Source: https://github.com/xinyuwang1126/recognition/blob/master/situation_train.py
# Report: fixed version of the situation-captioning trainer: the loss is reduced with .item() before it reaches the AverageMeter (as the repo's own validate() does)
# Shape: AverageMeter.update still does `self.sum += val * n`, but it only ever receives Python floats (loss.item(), accuracy() already returns a float)
# Expect: near-miss: must be silent
import time

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
alpha_c = 1.0
grad_clip = 5.0
print_freq = 100


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


def accuracy(scores, targets, k):
    _, ind = scores.topk(k, 1, True, True)
    correct = ind.eq(targets.view(-1, 1).expand_as(ind))
    return correct.view(-1).float().sum().item() * (100.0 / targets.size(0))


def clip_gradient(optimizer, clip):
    for group in optimizer.param_groups:
        for param in group["params"]:
            if param.grad is not None:
                param.grad.data.clamp_(-clip, clip)


def train(train_loader, encoder, decoder, criterion, encoder_optimizer, decoder_optimizer, epoch):
    decoder.train()
    encoder.train()
    losses = AverageMeter()
    top1accs = AverageMeter()
    start = time.time()

    for i, (imgs, caplens, roles, all_frames) in enumerate(train_loader):
        imgs = encoder(imgs.to(device))
        caplens, roles, all_frames = caplens.to(device), roles.to(device), all_frames.to(device)
        frame_losses, frame_accs = [], []
        for j in range(3):
            frames = all_frames[:, j, :].squeeze(1)
            scores, caps_sorted, decode_lengths, alphas, _ = decoder(imgs, frames, caplens, roles)
            scores, _ = pack_padded_sequence(scores, decode_lengths, batch_first=True)
            targets, _ = pack_padded_sequence(caps_sorted, decode_lengths, batch_first=True)
            cur_loss = criterion(scores, targets)
            cur_loss += alpha_c * ((1.0 - alphas.sum(dim=1)) ** 2).mean()
            frame_losses.append(cur_loss)
            frame_accs.append(accuracy(scores, targets, 1))
        loss = sum(frame_losses) / 3
        top1 = max(frame_accs)

        decoder_optimizer.zero_grad()
        encoder_optimizer.zero_grad()
        loss.backward()
        clip_gradient(decoder_optimizer, grad_clip)
        clip_gradient(encoder_optimizer, grad_clip)
        decoder_optimizer.step()
        encoder_optimizer.step()

        losses.update(loss.item(), sum(decode_lengths))
        top1accs.update(top1, sum(decode_lengths))
        if i % print_freq == 0:
            print("Epoch [{0}][{1}/{2}] {3:.2f}s Loss {loss.val:.4f} ({loss.avg:.4f}) Top-1 {acc.val:.3f}".format(
                epoch, i, len(train_loader), time.time() - start, loss=losses, acc=top1accs))
            start = time.time()
