# Source: https://github.com/sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning/issues/57
# Report: training fits batch 96-128, but validate() runs out of CUDA memory at scores.clone(); the maintainer's fix was to put the validate body under torch.no_grad()
# Shape: a validate() helper with eval() on encoder/decoder, an AverageMeter fed .item() values, and BLEU hypotheses built from .tolist(): only the forward passes keep activations
# Expect: TML003 line 32; TML003 line 33
import time

import torch
from torch.nn.utils.rnn import pack_padded_sequence

from metrics import AverageMeter, accuracy, corpus_bleu

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
ALPHA_C = 1.0


def validate(val_loader, encoder, decoder, criterion, word_map):
    decoder.eval()
    if encoder is not None:
        encoder.eval()

    losses = AverageMeter()
    top5accs = AverageMeter()
    references, hypotheses = [], []
    start = time.time()

    for i, (imgs, caps, caplens, allcaps) in enumerate(val_loader):
        imgs = imgs.to(device)
        caps = caps.to(device)
        caplens = caplens.to(device)

        if encoder is not None:
            imgs = encoder(imgs)  # expect: TML003
        scores, caps_sorted, decode_lengths, alphas, sort_ind = decoder(imgs, caps, caplens)  # expect: TML003

        targets = caps_sorted[:, 1:]
        scores_copy = scores.clone()
        scores = pack_padded_sequence(scores, decode_lengths, batch_first=True).data
        targets = pack_padded_sequence(targets, decode_lengths, batch_first=True).data

        loss = criterion(scores, targets)
        loss += ALPHA_C * ((1.0 - alphas.sum(dim=1)) ** 2).mean()

        losses.update(loss.item(), sum(decode_lengths))
        top5accs.update(accuracy(scores, targets, 5), sum(decode_lengths))

        skip = {word_map["<start>"], word_map["<pad>"]}
        allcaps = allcaps[sort_ind]
        for j in range(allcaps.shape[0]):
            img_caps = allcaps[j].tolist()
            references.append([[w for w in c if w not in skip] for c in img_caps])

        _, preds = torch.max(scores_copy, dim=2)
        preds = preds.tolist()
        hypotheses.extend(p[:decode_lengths[j]] for j, p in enumerate(preds))

    bleu4 = corpus_bleu(references, hypotheses)
    print(f"* LOSS {losses.avg:.3f} TOP-5 {top5accs.avg:.3f} BLEU-4 {bleu4} ({time.time() - start:.1f}s)")
    return bleu4
