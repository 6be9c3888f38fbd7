# Source: https://github.com/marvinhehehe/PI-model-and-Temporal-Ensembling/blob/7324a20b9c044d48fbaf908114a8394c2226095c/src/train.py
# Report: audit of a Pi-model / temporal-ensembling trainer: in the "temporal" branch the per-sample ensemble Z is updated every batch from its own previous rows and the live logits (no detach), so Z carries a graph that links every step of every epoch; only the read of the bias-corrected targets is detached
# Shape: train() keeps Z / z as dataset-sized tensors on the device; the batch loop writes Z[ids] = alpha * Z[ids] + (1 - alpha) * logits, the epoch end rescales z from Z, evaluation runs every eval_step batches and checkpoints the best model
# Expect: TML005 line 52
import math

import torch
from torch import nn


def ramp_weight(epoch, ramp_epochs, max_val, n_labeled, n_samples):
    if epoch == 0:
        return 0.0
    scaled = max_val * n_labeled / n_samples
    if epoch >= ramp_epochs:
        return scaled
    p = 1.0 - epoch / ramp_epochs
    return scaled * math.exp(-5.0 * p * p)


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    criterion = nn.CrossEntropyLoss()
    total_loss, correct, seen = 0.0, 0, 0
    for images, labels, _ in loader:
        images, labels = images.to(device), labels.to(device)
        logits = model(images)
        total_loss += criterion(logits, labels).item()
        correct += (logits.argmax(dim=1) == labels).sum().item()
        seen += labels.size(0)
    return total_loss / len(loader), correct / seen


def train(model, train_loader, val_loader, args, n_labeled, device="cuda"):
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.999))
    ce = nn.CrossEntropyLoss(ignore_index=-1)
    mse = nn.MSELoss()
    n_samples = len(train_loader.dataset)
    Z = torch.zeros(n_samples, args.num_classes, device=device)
    z = torch.zeros(n_samples, args.num_classes, device=device)
    step, best_acc = 0, 0.0
    for epoch in range(args.epochs):
        w = ramp_weight(epoch, args.ramp_epochs, args.max_val, n_labeled, n_samples)
        for images, labels, ids in train_loader:
            model.train()
            images, labels, ids = images.to(device), labels.to(device), ids.to(device)
            logits = model(images)
            loss = w * mse(logits, z[ids].detach())
            if (labels != -1).any():
                loss = loss + ce(logits, labels)
            Z[ids] = args.alpha * Z[ids] + (1.0 - args.alpha) * logits  # expect: TML005
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step % args.eval_step == 0:
                val_loss, acc = evaluate(model, val_loader, device)
                print(f"step {step}: val loss {val_loss:.4f} acc {acc:.4f}")
                if acc > best_acc:
                    best_acc = acc
                    torch.save({"step": step, "model": model.state_dict()}, args.ckpt_path)
        z = Z * (1.0 / (1.0 - args.alpha ** (epoch + 1)))
    return best_acc
