# Source: https://github.com/hyukahn16/compare_pgd/blob/03ad92dfdc2460a40a414c48a3842c129c890060/util.py
# Report: PGD adversarial training on CIFAR-10: an Adversary helper builds the attack with torch.autograd.grad inside enable_grad (so it also works from the no_grad test loop) and re-detaches the image after every step.
# Shape: x is loop-carried through the PGD steps but rebuilt as x.detach() + alpha * sign(grad.detach()) each step; test forwards run under no_grad; losses are summed with .item().
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torchvision
import torchvision.transforms as T


class Experiment:
    def __init__(self, device, lr=0.1, train_iters=10, test_iters=20):
        self.device = device
        self.model = torchvision.models.resnet18(num_classes=10).to(device)
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = optim.SGD(self.model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
        train_set = torchvision.datasets.CIFAR10("../data", train=True, download=True, transform=T.ToTensor())
        test_set = torchvision.datasets.CIFAR10("../data", train=False, download=True, transform=T.ToTensor())
        self.train_loader = torch.utils.data.DataLoader(train_set, batch_size=128, shuffle=True, num_workers=4)
        self.test_loader = torch.utils.data.DataLoader(test_set, batch_size=100, shuffle=False, num_workers=4)
        self.train_iters = train_iters
        self.test_iters = test_iters

    def train(self, adversary):
        self.model.train()
        running, correct, total = 0.0, 0, 0
        for inputs, targets in self.train_loader:
            inputs, targets = inputs.to(self.device), targets.to(self.device)
            self.optimizer.zero_grad()
            adv = adversary.perturb(inputs, targets, self.train_iters)
            logits = self.model(adv)
            loss = self.criterion(logits, targets)
            loss.backward()
            self.optimizer.step()
            running += loss.item()
            correct += logits.max(1)[1].eq(targets).sum().item()
            total += targets.size(0)
        return running, correct / total

    def test(self, adversary):
        self.model.eval()
        clean_ok, adv_ok, adv_loss, total = 0, 0, 0.0, 0
        with torch.no_grad():
            for inputs, targets in self.test_loader:
                inputs, targets = inputs.to(self.device), targets.to(self.device)
                total += targets.size(0)
                clean_ok += self.model(inputs).max(1)[1].eq(targets).sum().item()
                adv = adversary.perturb(inputs, targets, self.test_iters)
                adv_logits = self.model(adv)
                adv_loss += self.criterion(adv_logits, targets).item()
                adv_ok += adv_logits.max(1)[1].eq(targets).sum().item()
        return clean_ok / total, adv_ok / total, adv_loss


class Adversary:
    def __init__(self, exp, eps=8 / 255, alpha=2 / 255, rand_init=True):
        self.model = exp.model
        self.eps = eps
        self.alpha = alpha
        self.rand_init = rand_init

    def perturb(self, x_nat, y, n_iter):
        x = x_nat.detach()
        if self.rand_init:
            x = x + torch.zeros_like(x).uniform_(-self.eps, self.eps)
        for _ in range(n_iter):
            x.requires_grad_()
            with torch.enable_grad():
                loss = F.cross_entropy(self.model(x), y)
            grad = torch.autograd.grad(loss, [x])[0]
            x = x.detach() + self.alpha * torch.sign(grad.detach())
            x = torch.min(torch.max(x, x_nat - self.eps), x_nat + self.eps)
            x = torch.clamp(x, 0, 1)
        return x


if __name__ == "__main__":
    exp = Experiment("cuda")
    adversary = Adversary(exp)
    for epoch in range(90):
        exp.train(adversary)
        if (epoch + 1) % 10 == 0:
            exp.test(adversary)
