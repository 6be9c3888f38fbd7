# Source: https://github.com/horovod/horovod/pull/641
# Report: the ImageNet example averaged the training loss across workers with a Metric whose update all-reduced the loss as given; the loss still carried its graph and the example ran out of memory.
# Shape: a metric class folds the all-reduced value into `self.sum` inside its update method; the training loop passes the graph-carrying loss to it every batch.
# Expect: TML001 line 36
import horovod.torch as hvd
import torch
import torch.nn.functional as F


class Metric:
    def __init__(self, name):
        self.name = name
        self.sum = torch.tensor(0.0)
        self.n = torch.tensor(0.0)

    def update(self, val):
        self.sum += hvd.allreduce(val, name=self.name)
        self.n += 1

    @property
    def avg(self):
        return self.sum / self.n


def train(epoch, model, optimizer, train_loader, log_writer):
    model.train()
    train_loss = Metric("train_loss")
    train_accuracy = Metric("train_accuracy")
    for data, target in train_loader:
        data, target = data.cuda(), target.cuda()
        optimizer.zero_grad()
        output = model(data)
        loss = F.cross_entropy(output, target)
        loss.backward()
        optimizer.step()
        train_loss.update(loss)  # expect: TML001
        train_accuracy.update(output.max(1)[1].eq(target).float().mean())
    if log_writer is not None:
        log_writer.add_scalar("train/loss", train_loss.avg, epoch)
