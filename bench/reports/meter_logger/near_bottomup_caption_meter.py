# Source: https://github.com/poojahira/image-captioning-bottom-up-top-down/blob/77cf528a8c9b4231ca33796336c2ed957f360ef0/train.py
# Report: bottom-up/top-down captioning train() tracks the per-word loss in an AverageMeter (update does self.sum += val * n) and feeds it loss.item()
# Shape: the meter only ever receives Python floats (loss.item(), accuracy() ends in .item()); validation runs under torch.no_grad() and keeps preds as lists via .tolist()
# Expect: near-miss: must be silent
import time

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print_freq = 100


class AverageMeter(object):
    """Keeps track of the most recent value, sum, count and average of a metric."""

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
    batch_size = targets.size(0)
    _, ind = scores.topk(k, 1, True, True)
    correct = ind.eq(targets.view(-1, 1).expand_as(ind))
    return correct.view(-1).float().sum().item() * (100.0 / batch_size)


def train(train_loader, decoder, criterion_ce, criterion_dis, decoder_optimizer, epoch):
    decoder.train()
    batch_time = AverageMeter()
    losses = AverageMeter()
    top5accs = AverageMeter()
    start = time.time()

    for i, (imgs, caps, caplens) in enumerate(train_loader):
        imgs, caps, caplens = imgs.to(device), caps.to(device), caplens.to(device)

        scores, scores_d, caps_sorted, decode_lengths, sort_ind = decoder(imgs, caps, caplens)
        # max-pool the word scores over time for the discriminative (multi-label) loss
        scores_d = scores_d.max(1)[0]

        targets = caps_sorted[:, 1:]
        targets_d = torch.full_like(scores_d, -1, dtype=torch.long)
        for length in decode_lengths:
            targets_d[:, :length - 1] = targets[:, :length - 1]

        scores = pack_padded_sequence(scores, decode_lengths, batch_first=True).data
        targets = pack_padded_sequence(targets, decode_lengths, batch_first=True).data

        loss_d = criterion_dis(scores_d, targets_d)
        loss_g = criterion_ce(scores, targets)
        loss = loss_g + (10 * loss_d)

        decoder_optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(decoder.parameters(), 0.25)
        decoder_optimizer.step()

        top5 = accuracy(scores, targets, 5)
        losses.update(loss.item(), sum(decode_lengths))
        top5accs.update(top5, sum(decode_lengths))
        batch_time.update(time.time() - start)
        start = time.time()

        if i % print_freq == 0:
            print("Epoch: [{0}][{1}/{2}]\tLoss {loss.val:.4f} ({loss.avg:.4f})\t"
                  "Top-5 Accuracy {top5.val:.3f} ({top5.avg:.3f})".format(
                      epoch, i, len(train_loader), loss=losses, top5=top5accs))


def validate(val_loader, decoder, criterion_ce, criterion_dis):
    decoder.eval()
    losses = AverageMeter()
    hypotheses = list()
    with torch.no_grad():
        for i, (imgs, caps, caplens, allcaps) in enumerate(val_loader):
            imgs, caps, caplens = imgs.to(device), caps.to(device), caplens.to(device)
            scores, scores_d, caps_sorted, decode_lengths, sort_ind = decoder(imgs, caps, caplens)
            targets = caps_sorted[:, 1:]
            scores_copy = scores.clone()
            scores = pack_padded_sequence(scores, decode_lengths, batch_first=True).data
            targets = pack_padded_sequence(targets, decode_lengths, batch_first=True).data
            loss = criterion_ce(scores, targets)
            losses.update(loss.item(), sum(decode_lengths))

            _, preds = torch.max(scores_copy, dim=2)
            preds = preds.tolist()
            hypotheses.extend(p[:decode_lengths[j]] for j, p in enumerate(preds))
    print(" * LOSS - {loss.avg:.3f}".format(loss=losses))
    return losses.avg, hypotheses
