# Source: https://github.com/wvangansbeke/Unsupervised-Classification/blob/57dff9223303ad1d906cb1e54c0a04a78dee720d/utils/train_utils.py
# Report: audited SCAN clustering loop with several heads: per-head total/consistency/entropy losses are collected in lists that the repository re-creates every iteration, logging only .item() means
# Shape: as in the repository: the three per-head lists are re-created inside the batch loop (they die with the iteration) and only .item() means go to the epoch-level meters
# Expect: near-miss: must be silent
import numpy as np
import torch


class AverageMeter(object):
    def __init__(self, name):
        self.name = name
        self.sum = 0.0
        self.count = 0
        self.avg = 0.0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def scan_train(train_loader, model, criterion, optimizer, epoch, update_cluster_head_only=False):
    consistency_losses = AverageMeter("Consistency Loss")
    entropy_losses = AverageMeter("Entropy")
    if update_cluster_head_only:
        model.eval()
    else:
        model.train()

    for i, batch in enumerate(train_loader):
        anchors = batch["anchor"].cuda(non_blocking=True)
        neighbors = batch["neighbor"].cuda(non_blocking=True)

        if update_cluster_head_only:
            with torch.no_grad():
                anchors_features = model(anchors, forward_pass="backbone")
                neighbors_features = model(neighbors, forward_pass="backbone")
            anchors_output = model(anchors_features, forward_pass="head")
            neighbors_output = model(neighbors_features, forward_pass="head")
        else:
            anchors_output = model(anchors)
            neighbors_output = model(neighbors)

        total_loss, consistency_loss, entropy_loss = [], [], []
        for anchors_output_subhead, neighbors_output_subhead in zip(anchors_output, neighbors_output):
            total_loss_, consistency_loss_, entropy_loss_ = criterion(
                anchors_output_subhead, neighbors_output_subhead
            )
            total_loss.append(total_loss_)
            consistency_loss.append(consistency_loss_)
            entropy_loss.append(entropy_loss_)

        consistency_losses.update(np.mean([v.item() for v in consistency_loss]))
        entropy_losses.update(np.mean([v.item() for v in entropy_loss]))
        total_loss = torch.sum(torch.stack(total_loss, dim=0))

        optimizer.zero_grad()
        total_loss.backward()
        optimizer.step()

        if i % 25 == 0:
            print("Epoch: [{}][{}/{}] total {:.4e}".format(epoch, i, len(train_loader), total_loss.item()))

    print("Epoch {}: consistency {:.4f} entropy {:.4f}".format(epoch, consistency_losses.avg, entropy_losses.avg))
    return consistency_losses.avg, entropy_losses.avg
