# Source: http://kler.cn/a/413046.html
# Report: blog on loss.item(): accumulating the raw loss (loss_sum += loss) makes GPU memory keep rising because the sum stays part of the autograd graph; under DataParallel average per-GPU losses first, then .item()
# Shape: the blog's fix: the per-replica losses are averaged with torch.mean and only the Python scalar (.item()) enters the epoch total
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class WithLoss(nn.Module):
    """Wraps the model so that each replica computes its own loss."""

    def __init__(self, model, criterion):
        super().__init__()
        self.model = model
        self.criterion = criterion

    def forward(self, images, labels):
        logits = self.model(images)
        return self.criterion(logits, labels).unsqueeze(0)


def reduce_replicas(per_gpu_loss):
    # DataParallel gathers one loss per GPU: average them before backward/logging
    return torch.mean(per_gpu_loss)


def train_one_epoch(net, loader, optimizer, epoch, log_every=100):
    net.train()
    loss_sum = 0
    seen = 0
    for step, (images, labels) in enumerate(loader):
        images = images.cuda(non_blocking=True)
        labels = labels.cuda(non_blocking=True)
        optimizer.zero_grad()
        loss = reduce_replicas(net(images, labels))
        loss.backward()
        optimizer.step()

        loss_sum += loss.item()
        seen += 1
        if step % log_every == 0:
            print(f"epoch {epoch} step {step} running loss {loss_sum / seen}")
    return loss_sum / max(seen, 1)


def main(model, loader, epochs=10):
    criterion = nn.CrossEntropyLoss()
    net = nn.DataParallel(WithLoss(model, criterion)).cuda()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(epochs):
        avg = train_one_epoch(net, loader, optimizer, epoch)
        print(f"epoch {epoch} mean loss {avg:.4f}")
