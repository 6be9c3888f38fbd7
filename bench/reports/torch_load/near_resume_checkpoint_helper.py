# Source: https://github.com/noameron5/fgsm-catastrophic-overfitting/blob/c521cbe375fd59a6c40d6ea2fa34b4d325eb2e84/utils.py
# Report: audit of the same study's checkpoint helpers (fixed): load_checkpoint called torch.load(filename) with no map_location; here the checkpoint is mapped to the CPU and load_state_dict copies it onto the model's device
# Shape: same save/load pair and resume() driver; the only change is map_location="cpu" in load_checkpoint
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


def save_checkpoint(model, optimizer, scheduler, epoch, metrics, filename):
    torch.save({
        "epoch": epoch,
        "model_state_dict": model.state_dict(),
        "optimizer_state_dict": optimizer.state_dict(),
        "scheduler_state_dict": scheduler.state_dict() if scheduler is not None else None,
        "metrics": metrics,
    }, filename)


def load_checkpoint(filename, model, optimizer=None, scheduler=None):
    checkpoint = torch.load(filename, map_location="cpu")
    model.load_state_dict(checkpoint["model_state_dict"])
    if optimizer is not None and "optimizer_state_dict" in checkpoint:
        optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    if scheduler is not None and checkpoint.get("scheduler_state_dict") is not None:
        scheduler.load_state_dict(checkpoint["scheduler_state_dict"])
    return checkpoint


def train_epoch(model, loader, optimizer, epsilon, device):
    model.train()
    running = 0.0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        delta = torch.zeros_like(inputs).uniform_(-epsilon, epsilon).requires_grad_(True)
        loss = F.cross_entropy(model(inputs + delta), targets)
        (grad,) = torch.autograd.grad(loss, delta)
        X_adv = torch.clamp(inputs + epsilon * grad.sign(), 0, 1).detach()
        optimizer.zero_grad()
        loss = F.cross_entropy(model(X_adv), targets)
        loss.backward()
        optimizer.step()
        running += loss.item()
    return running / len(loader)


def resume(model_fn, loader, ckpt_path, total_epochs=30, epsilon=8 / 255, device="cuda"):
    model = model_fn().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[15, 25], gamma=0.1)
    checkpoint = load_checkpoint(ckpt_path, model, optimizer, scheduler)
    history = checkpoint["metrics"]
    for epoch in range(checkpoint["epoch"] + 1, total_epochs):
        history.setdefault("train_loss", []).append(train_epoch(model, loader, optimizer, epsilon, device))
        scheduler.step()
        save_checkpoint(model, optimizer, scheduler, epoch, history, ckpt_path)
    return model, history
