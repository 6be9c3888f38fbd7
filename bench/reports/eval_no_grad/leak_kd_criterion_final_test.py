# Source: https://github.com/wonbeomjang/knowledge-distillation-study/blob/029e564e18be61c1183058c4ecfdfbb2d203289e/train_distill.py
# Report: test() runs the student through the distillation criterion with no grad-disabled context of its own; the per-epoch call is wrapped in no_grad by train(), but the final evaluation after training calls test() bare, saving the student's activations for a backward that never comes
# Shape: the criterion module runs student and teacher and returns (loss, logits); test() only takes .item() values, so the cost is a peak per batch, not growth
# Expect: TML003 line 45
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.sum, self.count, self.avg = 0.0, 0, 0.0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class SoftTargetKD(nn.Module):
    def __init__(self, temperature=4.0, alpha=0.9):
        super().__init__()
        self.t = temperature
        self.alpha = alpha

    def forward(self, image, target, student, teacher):
        logits = student(image)
        with torch.no_grad():
            soft = F.softmax(teacher(image) / self.t, dim=1)
        kd = F.kl_div(F.log_softmax(logits / self.t, dim=1), soft, reduction="batchmean") * self.t ** 2
        ce = F.cross_entropy(logits, target)
        return self.alpha * kd + (1 - self.alpha) * ce, logits


def test(student, teacher, criterion, loader, device):
    acc_meter, loss_meter = AverageMeter(), AverageMeter()
    student.eval()
    for image, target in loader:
        image, target = image.to(device), target.to(device)
        loss, logits = criterion(image, target, student, teacher)  # expect: TML003
        loss_meter.update(loss.item())
        acc_meter.update((logits.argmax(dim=1) == target).float().mean().item())
    student.train()
    return {"val/loss": loss_meter.avg, "val/acc": acc_meter.avg}


def train(student, teacher, criterion, optimizer, scheduler, train_loader, val_loader, epochs, run_dir, device):
    best = 0.0
    for epoch in range(epochs):
        student.train()
        for image, target in train_loader:
            image, target = image.to(device), target.to(device)
            loss, _ = criterion(image, target, student, teacher)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
        with torch.no_grad():
            result = test(student, teacher, criterion, val_loader, device)
        if result["val/acc"] > best:
            best = result["val/acc"]
            torch.save(student.state_dict(), os.path.join(run_dir, "best.pth"))
        torch.save(student.state_dict(), os.path.join(run_dir, "last.pth"))
    return best


def main(student, teacher, train_loader, val_loader, run_dir, epochs=200, device="cuda"):
    teacher = teacher.to(device).eval()
    for p in teacher.parameters():
        p.requires_grad_(False)
    student = student.to(device)
    criterion = SoftTargetKD().to(device)
    optimizer = torch.optim.Adam(student.parameters(), lr=1e-4, weight_decay=1e-5)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[100, 150], gamma=0.5)
    train(student, teacher, criterion, optimizer, scheduler, train_loader, val_loader, epochs, run_dir, device)
    state = torch.load(os.path.join(run_dir, "last.pth"), map_location=device)
    student.load_state_dict(state)
    final = test(student, teacher, criterion, val_loader, device)
    print(f"final: loss {final['val/loss']:.4f} acc {final['val/acc']:.4f}")
    return final
