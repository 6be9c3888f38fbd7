# Source: https://github.com/horovod/horovod/pull/641
# Report: the merged fix detaches (and moves to CPU) the value inside Metric.update before the all-reduce.
# Shape: same metric class and loop passing the raw loss; the update method detaches what it is given before folding it into its sum.
# Expect: near-miss: must be silent
import horovod.torch as hvd
import torch
import torch.nn.functional as F


class Metric:
    def __init__(self, name):
        self.name = name
        self.sum = torch.tensor(0.0)
        self.n = torch.tensor(0.0)

    def update(self, val):
        self.sum += hvd.allreduce(val.detach().cpu(), name=self.name)
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
        train_loss.update(loss)
        train_accuracy.update(output.max(1)[1].eq(target).float().mean())
    if log_writer is not None:
        log_writer.add_scalar("train/loss", train_loss.avg, epoch)
