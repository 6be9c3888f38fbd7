# Source: https://github.com/EsraErgun/Continual-Learning-EWC-SI/blob/main/learner.py
# Report: permuted-MNIST EWC learner (written for PyTorch 0.3.1, where volatile=True disabled autograd) ported to current PyTorch: the per-task test loop runs under torch.no_grad()
# Shape: after self.model.eval() the test forwards sit inside with torch.no_grad(); the training loop's accuracy += mean(argmax == target) and the Fisher loop's fisher += p.grad.detach() ** 2 keep no graph
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class EWC:
    def __init__(self, model, train_loader, permutations, lamb):
        self.model = model
        self.train_loader = train_loader
        self.permutations = permutations
        self.fisher_dict_list = []
        self.param_history = []
        self.lamb = lamb
        self.task_count = 1

    def calculate_fisher(self):
        fisher_dict = {n: p.detach().clone().zero_() for n, p in self.model.named_parameters()}
        self.model.eval()
        for batch_idx, (data, target) in enumerate(self.train_loader):
            data, target = data.cuda().view(-1, 28 * 28), target.cuda()
            data = data[:, self.permutations[self.task_count - 1]]
            loss = nn.CrossEntropyLoss()(self.model(data), target)
            self.model.zero_grad()
            loss.backward()
            for n, p in self.model.named_parameters():
                if p.requires_grad and p.grad is not None:
                    fisher_dict[n] += p.grad.detach() ** 2
        self.fisher_dict_list.append({n: f / (batch_idx + 1) for n, f in fisher_dict.items()})
        self.task_count += 1
        self.param_history.append({n: p.detach().clone() for n, p in self.model.named_parameters()})

    def calculate_ewc_loss(self):
        losses = []
        for task in range(self.task_count - 1):
            for n, p in self.model.named_parameters():
                if p.requires_grad:
                    losses.append((self.fisher_dict_list[task][n] * (p - self.param_history[task][n]) ** 2).sum())
        return 0.5 * sum(losses)


class CL:
    def __init__(self, model, permutations, train_loader, test_loader, optimizer, ewc=None):
        self.model = model
        self.permutations = permutations
        self.train_loader = train_loader
        self.test_loader = test_loader
        self.optimizer = optimizer
        self.ewc = ewc

    def train(self):
        self.model.train()
        accuracy = 0
        for permutation in self.permutations:
            for epoch in range(3):
                for batch_idx, (data, target) in enumerate(self.train_loader):
                    data, target = Variable(data.cuda()), Variable(target.cuda())
                    data = data.view(-1, 28 * 28)[:, permutation]
                    self.optimizer.zero_grad()
                    output = self.model(data)
                    _, indexes = torch.max(output, 1)
                    accuracy += torch.mean((indexes == target).float()) / 5000.
                    loss = nn.CrossEntropyLoss()(output, target)
                    if self.ewc and self.ewc.task_count > 1:
                        loss += 5000 * self.ewc.calculate_ewc_loss()
                    loss.backward()
                    self.optimizer.step()
                    if batch_idx % 5000 == 0:
                        print("epoch", epoch, "loss", loss.data.item(), "acc", accuracy.data.item())
                        accuracy = 0

            if self.ewc:
                self.ewc.calculate_fisher()

            self.model.eval()
            test_loss = 0
            correct = 0
            with torch.no_grad():
                for data, target in self.test_loader:
                    data, target = data.cuda(), target.cuda()
                    data = data.view(-1, 28 * 28)[:, permutation]
                    output = self.model(data)
                    test_loss += F.cross_entropy(output, target, reduction="sum").data.item()
                    pred = output.data.max(1, keepdim=True)[1]
                    correct += pred.eq(target.data.view_as(pred)).cpu().sum()
            test_loss /= len(self.test_loader.dataset)
            print("Test: average loss {:.4f}, accuracy {}/{}".format(test_loss, correct, len(self.test_loader.dataset)))
            self.model.train()
