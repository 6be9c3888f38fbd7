# Source: https://github.com/benchislett/Skunkworks/blob/1303f53770ac15a73840ae811db7e80568172d21/Python3/ResNet-18/test.py
# Report: audit of a ResNet-18 CIFAR project (fixed): test_batch() ran its forward after model.eval() without no_grad; here it is decorated with @torch.no_grad(), and train_batch keeps the repo's correct shape of returning loss_batch.item() to a caller that sums it
# Shape: same per-batch helpers; the training caller's `loss_acc += loss` sums a float returned by the helper, the test helper is grad-disabled by decorator
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torchvision


def train_batch(model, loss_fn, optimizer, batch):
    optimizer.zero_grad()
    x, y = batch[0].cuda(), batch[1].cuda()
    pred = model(x)
    loss_batch = loss_fn(pred, y)
    loss_batch.backward()
    optimizer.step()
    return loss_batch.item()


def train(model, loss_fn, optimizer, loader):
    model.train()
    loss_acc, batches = 0.0, 0
    for batch in loader:
        loss = train_batch(model, loss_fn, optimizer, batch)
        loss_acc += loss
        batches += 1
    return loss_acc / batches


@torch.no_grad()
def test_batch(model, loss_fn, batch):
    x, y = batch[0].cuda(), batch[1].cuda()
    out = model(x)
    _, pred = torch.max(out, 1)
    loss = loss_fn(out, y).item()
    count = torch.sum(pred == y).item()
    return loss, count


def test(model, loss_fn, loader):
    model.eval()
    loss_acc, count_acc, batches = 0.0, 0, 0
    for batch in loader:
        loss, count = test_batch(model, loss_fn, batch)
        loss_acc += loss
        count_acc += count
        batches += 1
    return loss_acc / batches, count_acc / len(loader.dataset)


def main(train_loader, test_loader, epochs=30):
    model = torchvision.models.resnet18(num_classes=10).cuda()
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    for epoch in range(epochs):
        train_loss = train(model, loss_fn, optimizer, train_loader)
        test_loss, test_acc = test(model, loss_fn, test_loader)
        scheduler.step()
        print(f"epoch {epoch}: train {train_loss:.4f} test {test_loss:.4f} acc {test_acc:.3f}")
