# Source: https://github.com/LuminosityX/FNE/issues/1
# Report: host and GPU memory grew gradually during training until the process was OOM-killed; the model keeps running mean/variance meters of positive/negative similarities that are fed graph-attached scores every batch
# Shape: same meters on the model and same per-sample update loop, but the statistics are taken from a detached copy of the score matrix while the attached scores still feed the loss
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from torch import nn


class AverageSims:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val, self.avg, self.sum, self.count = 0, 0, 0, 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class VarianceSims:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val, self.var, self.sum, self.count = 0, 0, 0, 0

    def update(self, val, avg, n=1):
        self.val = val
        self.sum += (val * n - avg) ** 2
        self.count += n
        self.var = self.sum / max(self.count - 1, 1)


class RetrievalModel(nn.Module):
    def __init__(self, image_encoder, text_encoder, margin=0.2):
        super().__init__()
        self.image_encoder = image_encoder
        self.text_encoder = text_encoder
        self.margin = margin
        self.avg_pos, self.var_pos = AverageSims(), VarianceSims()
        self.avg_neg, self.var_neg = AverageSims(), VarianceSims()

    def similarity_statistics(self, img, txt):
        scores = img @ txt.T
        stats = scores.detach()
        eye = torch.eye(stats.size(0), dtype=torch.bool, device=stats.device)
        hardest_neg = stats.masked_fill(eye, 0).max(1)[0]
        top_i2t = stats.argmax(1)
        top_t2i = stats.argmax(0)
        for i in range(stats.size(0)):
            if top_i2t[i].item() == i and top_t2i[i].item() == i:
                self.avg_pos.update(stats[i, i])
                self.avg_neg.update(hardest_neg[i])
        for i in range(stats.size(0)):
            self.var_pos.update(stats[i, i], self.avg_pos.avg)
            self.var_neg.update(hardest_neg[i], self.avg_neg.avg)
        return scores

    def forward(self, images, tokens):
        img = F.normalize(self.image_encoder(images), dim=-1)
        txt = F.normalize(self.text_encoder(tokens), dim=-1)
        scores = self.similarity_statistics(img, txt)
        diag = scores.diag().view(-1, 1)
        cost = (self.margin + scores - diag).clamp(min=0).fill_diagonal_(0)
        return cost.max(1)[0].mean() + cost.max(0)[0].mean()
