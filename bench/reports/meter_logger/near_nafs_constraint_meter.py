# Source: https://github.com/TencentYoutuResearch/PersonReID-NAFS/blob/4f2ff7b7f0e604021a93ea664a5eadd38b571f3f/train.py
# Report: NAFS text-to-person retrieval training: epoch meters receive loss.item() and detached precisions; the end-of-epoch identity constraint sums graph-attached losses in a local AverageMeter on purpose and backpropagates the average
# Shape: train_loss gets a float; image_pre/text_pre get argmax-accuracy tensors that carry no graph; constraints() builds a fresh meter per call and its .avg is added to the loss that gets backward() (intended accumulation)
# Expect: near-miss: must be silent
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class AverageMeter(object):
    def __init__(self):
        self.val, self.avg, self.sum, self.count = 0, 0, 0, 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def pairwise_distance(A, B):
    a2 = torch.sum(A * A, dim=1, keepdim=True)
    b2 = torch.sum(B * B, dim=1, keepdim=True)
    return a2 + b2.t() - 2 * torch.matmul(A, B.t())


def constraints(features, labels):
    labels = labels.view(-1, 1)
    con_loss = AverageMeter()
    for index in {k.item() for k in labels}:
        feas = torch.masked_select(features, labels == index).view(-1, features.shape[1])
        num = feas.shape[0] * (feas.shape[0] - 1)
        if num == 0:
            continue
        loss = torch.sum(pairwise_distance(feas, feas)) / num
        con_loss.update(loss, n=num / 2)
    return con_loss.avg


class CMPCLoss(nn.Module):
    def __init__(self, feature_size, num_classes):
        super().__init__()
        self.W = nn.Parameter(torch.randn(feature_size, num_classes))
        nn.init.xavier_uniform_(self.W.data, gain=1)

    def forward(self, img_emb, txt_emb, labels):
        W_norm = F.normalize(self.W, p=2, dim=0)
        img_norm = img_emb / img_emb.norm(dim=1, keepdim=True)
        txt_norm = txt_emb / txt_emb.norm(dim=1, keepdim=True)
        img_logits = torch.matmul(torch.sum(img_emb * txt_norm, dim=1, keepdim=True) * txt_norm, W_norm)
        txt_logits = torch.matmul(torch.sum(txt_emb * img_norm, dim=1, keepdim=True) * img_norm, W_norm)
        loss = F.cross_entropy(img_logits, labels) + F.cross_entropy(txt_logits, labels)
        image_precision = torch.mean((torch.argmax(img_logits, dim=1) == labels).float())
        text_precision = torch.mean((torch.argmax(txt_logits, dim=1) == labels).float())
        return loss, image_precision, text_precision


def train(epoch, train_loader, network, optimizer, compute_loss, args):
    batch_time, train_loss = AverageMeter(), AverageMeter()
    image_pre, text_pre = AverageMeter(), AverageMeter()
    network.train()
    end = time.time()
    for step, (images, tokens, labels) in enumerate(train_loader):
        images, tokens, labels = images.cuda(), tokens.cuda(), labels.cuda()
        img_emb, txt_emb = network(images, tokens)
        loss, image_precision, text_precision = compute_loss(img_emb, txt_emb, labels)
        if args.constraints_text and step == len(train_loader) - 1:
            con_text = constraints(txt_emb, labels)
            loss = loss + con_text
            print('epoch:{}, con_text:{:.3f}'.format(epoch, float(con_text)))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        batch_time.update(time.time() - end)
        end = time.time()
        train_loss.update(loss.item(), images.shape[0])
        image_pre.update(image_precision, images.shape[0])
        text_pre.update(text_precision, images.shape[0])
        if step % 10 == 0:
            print('epoch:{}, step:{}, loss:{:.3f}'.format(epoch, step, train_loss.avg))
    return train_loss.avg, batch_time.avg, image_pre.avg, text_pre.avg
