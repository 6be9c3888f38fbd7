# Source: https://github.com/Spijkervet/SimCLR/issues/19
# Report: the issue is about eval mode when testing/logistic_regression.py extracts SimCLR features; auditing that file's test() (commit 085df25) shows the logistic head run after model.eval() with no grad-disabled context
# Shape: test() switches the linear head to eval and, per test batch, runs model(h) and the criterion outside torch.no_grad (only the frozen encoder is wrapped), saving activations for a backward that never comes
# Expect: TML003 line 58

import argparse

import torch
import torchvision
import torchvision.transforms as transforms

from experiment import ex
from model import load_model
from modules import LogisticRegression
from utils import post_config_hook


def train(args, loader, simclr_model, model, criterion, optimizer):
    loss_epoch = 0
    accuracy_epoch = 0
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        x = x.to(args.device)
        y = y.to(args.device)

        # frozen SimCLR encoder: h = 512-d representation, z = 64-d projection
        with torch.no_grad():
            h, z = simclr_model(x)

        output = model(h)
        loss = criterion(output, y)

        predicted = output.argmax(1)
        acc = (predicted == y).sum().item() / y.size(0)
        accuracy_epoch += acc

        loss.backward()
        optimizer.step()

        loss_epoch += loss.item()
        if step % 1000 == 0:
            print(f"Step [{step}/{len(loader)}]\t Loss: {loss.item()}\t Accuracy: {acc}")
    return loss_epoch, accuracy_epoch


def test(args, loader, simclr_model, model, criterion, optimizer):
    loss_epoch = 0
    accuracy_epoch = 0
    model.eval()
    for step, (x, y) in enumerate(loader):
        model.zero_grad()
        x = x.to(args.device)
        y = y.to(args.device)

        with torch.no_grad():
            h, z = simclr_model(x)

        output = model(h)  # expect: TML003
        loss = criterion(output, y)

        predicted = output.argmax(1)
        acc = (predicted == y).sum().item() / y.size(0)
        accuracy_epoch += acc
        loss_epoch += loss.item()
    return loss_epoch, accuracy_epoch


@ex.automain
def main(_run, _log):
    args = argparse.Namespace(**_run.config)
    args = post_config_hook(args, _run)
    args.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

    root = "./datasets"
    transform = transforms.Compose([
        transforms.ToTensor(),
        transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))])
    train_dataset = torchvision.datasets.CIFAR10(root, train=True, download=True, transform=transform)
    test_dataset = torchvision.datasets.CIFAR10(root, train=False, download=True, transform=transform)

    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=args.logistic_batch_size, shuffle=True,
        drop_last=True, num_workers=args.workers)
    test_loader = torch.utils.data.DataLoader(
        test_dataset, batch_size=args.logistic_batch_size, shuffle=False,
        drop_last=True, num_workers=args.workers)

    simclr_model, _, _ = load_model(args, train_loader, reload_model=True)
    simclr_model = simclr_model.to(args.device)
    simclr_model.eval()

    n_classes = 10
    model = LogisticRegression(simclr_model.n_features, n_classes).to(args.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    criterion = torch.nn.CrossEntropyLoss()

    for epoch in range(args.logistic_epochs):
        loss_epoch, accuracy_epoch = train(args, train_loader, simclr_model, model, criterion, optimizer)
        print(f"Epoch [{epoch}/{args.logistic_epochs}]\t Loss: {loss_epoch / len(train_loader)}\t Accuracy: {accuracy_epoch / len(train_loader)}")

    loss_epoch, accuracy_epoch = test(args, test_loader, simclr_model, model, criterion, optimizer)
    print(f"[FINAL]\t Loss: {loss_epoch / len(test_loader)}\t Accuracy: {accuracy_epoch / len(test_loader)}")
