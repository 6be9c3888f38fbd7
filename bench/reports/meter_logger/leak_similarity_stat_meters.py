# Source: https://github.com/LuminosityX/FNE/issues/1
# Report: host and GPU memory grew gradually during training until the process was OOM-killed; the model keeps running mean/variance meters of positive/negative similarities that are fed graph-attached scores every batch
# Shape: AverageMeter-style objects live on the model (reset once per epoch); a loss helper loops over the batch and calls meter.update(scores[i, i]) where scores = img_emb @ txt_emb.T still carries the encoders' graph
# Expect: TML001 line 55; TML001 line 56; TML001 line 58; TML001 line 59
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
        eye = torch.eye(scores.size(0), dtype=torch.bool, device=scores.device)
        hardest_neg = scores.masked_fill(eye, 0).max(1)[0]
        top_i2t = scores.argmax(1)
        top_t2i = scores.argmax(0)
        for i in range(scores.size(0)):
            if top_i2t[i].item() == i and top_t2i[i].item() == i:
                self.avg_pos.update(scores[i, i])  # expect: TML001
                self.avg_neg.update(hardest_neg[i])  # expect: TML001
        for i in range(scores.size(0)):
            self.var_pos.update(scores[i, i], self.avg_pos.avg)  # expect: TML001
            self.var_neg.update(hardest_neg[i], self.avg_neg.avg)  # expect: TML001
        return scores

    def forward(self, images, tokens):
        img = F.normalize(self.image_encoder(images), dim=-1)
        txt = F.normalize(self.text_encoder(tokens), dim=-1)
        scores = self.similarity_statistics(img, txt)
        diag = scores.diag().view(-1, 1)
        cost = (self.margin + scores - diag).clamp(min=0).fill_diagonal_(0)
        return cost.max(1)[0].mean() + cost.max(0)[0].mean()
