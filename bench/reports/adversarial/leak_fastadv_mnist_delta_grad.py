# Source: https://github.com/locuslab/fast_adversarial/issues/26
# Report: In the MNIST trainer's PGD branch, delta.grad is read after loss.backward() on every attack iteration but never zeroed, so the perturbation gradient accumulates across the inner steps.
# Shape: backward() is used only to read delta.grad while every model parameter still requires grad, so each attack step also fills parameter-sized .grad buffers that opt.zero_grad() throws away; delta.grad itself is never reset.
# Expect: TML020 line 43
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
            for _ in range(args.attack_iters):
                delta.requires_grad = True
                output = model(X + delta)
                loss = F.cross_entropy(output, y)
                opt.zero_grad()
                loss.backward()  # expect: TML020
                grad = delta.grad.detach()
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
