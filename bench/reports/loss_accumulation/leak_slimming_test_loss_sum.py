# Source: https://github.com/Eric-mingjie/network-slimming/blob/5b4d636578a63b63a32f290d8e511c3f24113953/main.py
# Report: audited code: test() of the network-slimming (channel pruning) trainer relies on Variable(volatile=True) and sums `F.cross_entropy(...).data[0]`; both idioms stop working from PyTorch 0.4 (volatile is a no-op, 0-dim indexing is an error)
# Shape: the natural port drops `.data[0]` and keeps the no-op volatile flag: test_loss (a Python 0 before the loop) sums graph-attached summed losses, and the forward keeps every batch's VGG activations alive until test() returns
# Expect: TML001 line 50; TML003 line 49
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class SlimmingTrainer:
    def __init__(self, model, train_loader, test_loader, optimizer, args):
        self.model = model
        self.train_loader = train_loader
        self.test_loader = test_loader
        self.optimizer = optimizer
        self.args = args

    def update_bn(self):
        # additional subgradient descent on the sparsity-induced penalty term
        for m in self.model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.grad.data.add_(self.args.s * torch.sign(m.weight.data))

    def train(self, epoch):
        self.model.train()
        for batch_idx, (data, target) in enumerate(self.train_loader):
            if self.args.cuda:
                data, target = data.cuda(), target.cuda()
            self.optimizer.zero_grad()
            output = self.model(data)
            loss = F.cross_entropy(output, target)
            loss.backward()
            if self.args.sr:
                self.update_bn()
            self.optimizer.step()
            if batch_idx % self.args.log_interval == 0:
                print('Train Epoch: {} [{}/{}]\tLoss: {:.6f}'.format(
                    epoch, batch_idx * len(data), len(self.train_loader.dataset), loss.item()))

    def test(self):
        self.model.eval()
        test_loss = 0
        correct = 0
        for data, target in self.test_loader:
            if self.args.cuda:
                data, target = data.cuda(), target.cuda()
            data, target = Variable(data, volatile=True), Variable(target)
            output = self.model(data)  # expect: TML003
            test_loss += F.cross_entropy(output, target, reduction='sum')  # expect: TML001
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()

        test_loss /= len(self.test_loader.dataset)
        print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.1f}%)\n'.format(
            float(test_loss), correct, len(self.test_loader.dataset),
            100. * correct / len(self.test_loader.dataset)))
        return correct / float(len(self.test_loader.dataset))


def run(trainer, epochs, start_epoch=0):
    best_prec1 = 0.
    for epoch in range(start_epoch, epochs):
        trainer.train(epoch)
        prec1 = trainer.test()
        best_prec1 = max(prec1, best_prec1)
    return best_prec1
