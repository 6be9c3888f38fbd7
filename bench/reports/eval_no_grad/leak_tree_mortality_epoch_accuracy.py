# Source: https://github.com/Upanpra/tree-mortality-CNN/blob/76e1dae424845f3b5fd4b84baaecac31d266a31d/src/trainer.py
# Report: the tree-mortality CNN trainer calls accuracy() on the full train loader and the test loader after every epoch; accuracy() switches to net.eval() but runs the forward passes with autograd on, so each batch saves activations for a backward that never comes
# Shape: trainCNN() with a cosine scheduler, per-epoch accuracy lists and best-checkpoint saving; accuracy() reads outputs.data for the argmax and only keeps .item() counts, so the cost is a higher peak per batch rather than growth
# Expect: TML003 line 25
from typing import Optional

import torch
from torch import nn

SUPPORTED_LR_SCHEDULERS = {"cosine"}


def to_device(images, labels):
    if torch.cuda.is_available():
        return images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
    return images, labels


def accuracy(net, data_loader):
    net.eval()
    correct = 0
    total = 0
    for images, labels in data_loader:
        images, labels = to_device(images, labels)
        outputs = net(images)  # expect: TML003
        _, predicted = torch.max(outputs.data, 1)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()
    net.train()
    return correct / total


def train_cnn(net, train_loader, test_loader, num_epochs, learning_rate, save_path,
              compute_accs=True, lr_scheduler: Optional[str] = "cosine"):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate)
    if lr_scheduler is not None:
        assert lr_scheduler in SUPPORTED_LR_SCHEDULERS, f"{lr_scheduler} unsupported"
        lr_scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, num_epochs)
    if torch.cuda.is_available():
        net = net.cuda()

    train_accs, test_accs = [], []
    best_acc = 0.0
    for epoch in range(num_epochs):
        for i, (images, labels) in enumerate(train_loader):
            images, labels = to_device(images, labels)
            optimizer.zero_grad()
            loss = criterion(net(images), labels)
            loss.backward()
            optimizer.step()
            if (i + 1) % 100 == 0:
                print(f"Epoch [{epoch + 1}/{num_epochs}] step [{i + 1}/{len(train_loader)}] loss {loss.item():.4f}")
        if compute_accs:
            train_acc = accuracy(net, train_loader)
            test_acc = accuracy(net, test_loader)
            train_accs.append(train_acc)
            test_accs.append(test_acc)
            print(f"Epoch [{epoch + 1}/{num_epochs}] train acc {100 * train_acc:.2f}% test acc {100 * test_acc:.2f}%")
            if test_acc > best_acc:
                best_acc = test_acc
                torch.save(net.state_dict(), save_path)
        if lr_scheduler is not None:
            lr_scheduler.step()
    return (net, train_accs, test_accs) if compute_accs else net
