# Source: https://github.com/mlelarge/graph_neural_net/commit/06d4962739382ca30b68d7309a1634c7c101bd00
# Report: commit "Changed validation to not compute gradients": the fix wraps the validation loop of the GNN trainer in torch.no_grad()
# Shape: same val_triplet(), but the whole loop over the val loader runs inside `with torch.no_grad():`; losses reach the meter via .data.item()
# Expect: near-miss: must be silent
import time

import torch
import torch.nn as nn


class AverageMeter:
    def __init__(self):
        self.val = 0.0
        self.sum = 0.0
        self.count = 0
        self.avg = 0.0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / max(self.count, 1)


class Logger:
    def __init__(self):
        self.meters = {}

    def reset_meters(self, tag):
        self.meters[tag] = {}

    def update_meter(self, tag, name, val, n=1):
        self.meters.setdefault(tag, {}).setdefault(name, AverageMeter()).update(val, n=n)

    def get_meter(self, tag, name):
        return self.meters.setdefault(tag, {}).setdefault(name, AverageMeter())


def train_triplet(train_loader, model, criterion, optimizer, logger, device, epoch):
    model.train()
    logger.reset_meters("train")
    end = time.time()
    for i, (input1, input2) in enumerate(train_loader):
        input1 = input1.to(device)
        K = input2.to(device)
        output = model(input1)
        proba = torch.softmax(output.squeeze(-1), -1)
        loss = torch.mean(criterion(proba, K[:, :, :, 1]) * input1[:, :, :, 1])
        logger.update_meter("train", "loss", loss.data.item(), n=1)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        logger.update_meter("train", "batch_time", time.time() - end, n=input1.shape[0])
        end = time.time()


def val_triplet(val_loader, model, criterion, logger, device, epoch, clique_size,
                eval_score=None, print_freq=10, val_test="val"):
    model.eval()
    logger.reset_meters(val_test)
    accu = los = None
    with torch.no_grad():
        for i, (input1, input2) in enumerate(val_loader):
            input1 = input1.to(device)
            K = input2.to(device)
            output = model(input1)
            rawscores = output.squeeze(-1)
            proba = torch.softmax(rawscores, -1)
            loss = torch.mean(criterion(proba, K[:, :, :, 1]) * input1[:, :, :, 1])
            logger.update_meter(val_test, "loss", loss.data.item(), n=1)
            if eval_score is not None:
                acc, total_n_vertices = eval_score(proba * input1[:, :, :, 1], clique_size)
                logger.update_meter(val_test, "acc", acc, n=total_n_vertices)
            if i % print_freq == 0:
                accu = logger.get_meter(val_test, "acc")
                los = logger.get_meter(val_test, "loss")
                print("{} epoch [{}][{}/{}] loss {:.4f} acc {:.3f}".format(
                    val_test, epoch, i, len(val_loader), los.avg, accu.avg))
    return accu.avg, los.avg
