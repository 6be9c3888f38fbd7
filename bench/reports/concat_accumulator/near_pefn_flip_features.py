# Source: https://github.com/711L/PEFN/blob/main/PEFN/utils/extract_feature.py
# Report: the repository's re-ID feature extractor: flip test-time augmentation, features summed and L2-normalised per batch, kept in a list and concatenated once after the loop
# Shape: under no_grad, each batch's feature is .data.cpu() before it is kept; torch.cat runs once on the finished list; the training loop reduces its loss with .item()
# Expect: near-miss: must be silent
import numpy as np
import torch
from tqdm import tqdm


def fliplr(img):
    inv_idx = torch.arange(img.size(3) - 1, -1, -1).long()
    return img.index_select(3, inv_idx)


def extract_feature(model, loader):
    with torch.no_grad():
        feats = []
        for (img, _) in loader:
            f1 = model(img.to("cuda"))[-1].data.cpu()
            f2 = model(fliplr(img).to("cuda"))[-1].data.cpu()
            f = f1 + f2
            fnorm = torch.norm(f, p=2, dim=1, keepdim=True)
            f = f.div(fnorm.expand_as(f))
            feats.append(f)
        feats = torch.cat(feats, dim=0)
        return feats


def euclidean_dist(x, y):
    xx = x.pow(2).sum(1, keepdim=True)
    yy = y.pow(2).sum(1, keepdim=True).t()
    return (xx + yy - 2 * x @ y.t()).clamp(min=1e-12).sqrt().numpy()


class DoTraining:
    def __init__(self, model, loss, data, optimizer, scheduler, get_rank):
        self.train_loader = data.train_loader
        self.test_loader = data.test_loader
        self.query_loader = data.query_loader
        self.queryset = data.queryset
        self.testset = data.testset
        self.model = model.cuda()
        self.loss = loss
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.get_rank = get_rank

    def train(self):
        self.scheduler.step()
        self.model.train()
        sum_loss = 0
        for batch, (inputs, labels) in enumerate(self.train_loader):
            inputs = inputs.cuda()
            labels = labels.cuda()
            self.optimizer.zero_grad()
            outputs = self.model(inputs)
            loss = self.loss(outputs, labels)
            sum_loss += loss.item()
            loss.backward()
            self.optimizer.step()
        print("sum_loss:{}".format(sum_loss))

    def evaluate(self):
        self.model.eval()
        print("extract features, this may take a few minutes")
        qf = extract_feature(self.model, tqdm(self.query_loader))
        gf = extract_feature(self.model, tqdm(self.test_loader))
        distmat = euclidean_dist(qf, gf)
        cmc, mAP = self.get_rank(distmat, self.queryset.pids, self.testset.pids,
                                 self.queryset.camids, self.testset.camids)
        print("mAP: {:.4f} rank1: {:.4f} rank5: {:.4f}".format(mAP, cmc[0], cmc[4]))
        return float(np.asarray(mAP))
