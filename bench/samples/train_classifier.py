"""A typical image-classification training script: the single-file latency input of bench/run.py.

Written for the benchmark; it contains the everyday memory slip of accumulating the loss tensor
(``running_loss += loss``), so a linter has something to report, like on a real pre-commit run.
"""
import argparse
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class SmallConvNet(nn.Module):
    def __init__(self, num_classes: int = 10, width: int = 32):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1),
            nn.BatchNorm2d(width),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1),
            nn.BatchNorm2d(2 * width),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = nn.Linear(2 * width, num_classes)

    def forward(self, images):
        return self.classifier(torch.flatten(self.features(images), 1))


def synthetic_loaders(batch_size: int, samples: int = 512):
    generator = torch.Generator().manual_seed(0)
    images = torch.randn(samples, 3, 32, 32, generator=generator)
    labels = torch.randint(0, 10, (samples,), generator=generator)
    split = samples * 4 // 5
    train = TensorDataset(images[:split], labels[:split])
    val = TensorDataset(images[split:], labels[split:])
    return (
        DataLoader(train, batch_size=batch_size, shuffle=True, num_workers=0),
        DataLoader(val, batch_size=batch_size, num_workers=0),
    )


def train_one_epoch(model, loader, optimizer, scheduler, device, log_every=20):
    model.train()
    running_loss = 0.0
    correct = 0
    seen = 0
    start = time.perf_counter()
    for step, (images, labels) in enumerate(loader):
        images, labels = images.to(device), labels.to(device)
        optimizer.zero_grad(set_to_none=True)
        logits = model(images)
        loss = F.cross_entropy(logits, labels)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
        optimizer.step()
        scheduler.step()

        running_loss += loss
        correct += (logits.argmax(dim=1) == labels).sum().item()
        seen += labels.numel()
        if step % log_every == 0:
            elapsed = time.perf_counter() - start
            print(f"step {step:5d}  loss {loss.item():.4f}  {seen / elapsed:.0f} img/s")
    return running_loss / max(1, step + 1), correct / max(1, seen)


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    total_loss = 0.0
    correct = 0
    seen = 0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        logits = model(images)
        total_loss += F.cross_entropy(logits, labels, reduction="sum").item()
        correct += (logits.argmax(dim=1) == labels).sum().item()
        seen += labels.numel()
    return total_loss / max(1, seen), correct / max(1, seen)


def save_checkpoint(path, model, optimizer, epoch):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    torch.save(
        {"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict()},
        path,
    )


def load_checkpoint(path, model, optimizer):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return state["epoch"] + 1


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--checkpoint", default="checkpoints/last.pt")
    parser.add_argument("--resume", action="store_true")
    return parser.parse_args()


def main():
    args = parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = SmallConvNet().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    train_loader, val_loader = synthetic_loaders(args.batch_size)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.lr, total_steps=args.epochs * len(train_loader)
    )
    first_epoch = load_checkpoint(args.checkpoint, model, optimizer) if args.resume else 0
    for epoch in range(first_epoch, args.epochs):
        train_loss, train_acc = train_one_epoch(model, train_loader, optimizer, scheduler, device)
        val_loss, val_acc = evaluate(model, val_loader, device)
        print(
            f"epoch {epoch}: train loss {float(train_loss):.4f} acc {train_acc:.3f}"
            f"  val loss {val_loss:.4f} acc {val_acc:.3f}"
        )
        save_checkpoint(args.checkpoint, model, optimizer, epoch)


if __name__ == "__main__":
    main()
