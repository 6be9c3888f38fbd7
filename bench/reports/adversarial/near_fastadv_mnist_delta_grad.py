# Source: https://github.com/locuslab/fast_adversarial/issues/26
# Report: Issue: the MNIST PGD branch reads delta.grad after loss.backward() but never zeroes it, so the perturbation gradient accumulates; closest correct variant: take the input gradient with torch.autograd.grad.
# Shape: torch.autograd.grad(loss, delta) returns a fresh gradient each attack step (no accumulation) and fills no parameter .grad buffers; the training step keeps its own zero_grad/backward/step.
# Expect: near-miss: must be silent
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision import datasets, transforms


class Flatten(nn.Module):
    def forward(self, x):
        return x.view(x.size(0), -1)


def mnist_net():
    return nn.Sequential(
        nn.Conv2d(1, 16, 4, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 4, stride=2, padding=1), nn.ReLU(),
        Flatten(), nn.Linear(32 * 7 * 7, 100), nn.ReLU(), nn.Linear(100, 10))


def train(args):
    loader = torch.utils.data.DataLoader(
        datasets.MNIST("../mnist-data", train=True, download=True, transform=transforms.ToTensor()),
        batch_size=args.batch_size, shuffle=True)
    model = mnist_net().cuda()
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr_max)
    for epoch in range(args.epochs):
        train_loss, train_acc, train_n = 0.0, 0.0, 0
        for i, (X, y) in enumerate(loader):
            X, y = X.cuda(), y.cuda()
            delta = torch.zeros_like(X).uniform_(-args.epsilon, args.epsilon)
            delta.data = torch.max(torch.min(1 - X, delta.data), 0 - X)
            delta.requires_grad_(True)
            for _ in range(args.attack_iters):
                output = model(X + delta)
                loss = F.cross_entropy(output, y)
                grad = torch.autograd.grad(loss, delta)[0].detach()
                I = output.max(1)[1] == y
                delta.data[I] = torch.clamp(delta + args.alpha * torch.sign(grad), -args.epsilon, args.epsilon)[I]
                delta.data[I] = torch.max(torch.min(1 - X, delta.data), 0 - X)[I]
            delta = delta.detach()
            output = model(torch.clamp(X + delta, 0, 1))
            loss = F.cross_entropy(output, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            train_loss += loss.item() * y.size(0)
            train_acc += (output.max(1)[1] == y).sum().item()
            train_n += y.size(0)
        print(epoch, train_loss / train_n, train_acc / train_n)
    return model


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", default=100, type=int)
    p.add_argument("--epochs", default=10, type=int)
    p.add_argument("--epsilon", default=0.3, type=float)
    p.add_argument("--alpha", default=0.01, type=float)
    p.add_argument("--attack-iters", default=40, type=int)
    p.add_argument("--lr-max", default=5e-3, type=float)
    train(p.parse_args())
