# Source: https://github.com/victaaahh/lsq-net/blob/bfb1f98eaf04c58cadbd825e3364f23db6115a43/model/kd_model.py
# Report: quantization-aware KD after commit bfb1f98 "Fixed freezing of teacher parameters": the teacher is frozen parameter by parameter
# Shape: p.requires_grad = False on each teacher Parameter really freezes it (no teacher .grad buffers); the loss is kept in the meter as loss.item()
# Expect: near-miss: must be silent
import time

import torch as t
import torch.nn as nn
import torch.nn.functional as F


class KDModel(nn.Module):
    def __init__(self, teacher, student, freeze_teacher):
        super().__init__()
        self.teacher = teacher
        if freeze_teacher:
            for p in self.teacher.parameters():
                p.requires_grad = False
        self.student = student

    def forward(self, x):
        teacher_out = self.teacher(x)
        student_out = self.student(x)
        return teacher_out, student_out


class MishraDistiller(nn.Module):
    def __init__(self, alpha=0.0, beta=1.0, gamma=1.0, temperature=1.0):
        super().__init__()
        self.alpha, self.beta, self.gamma, self.temperature = alpha, beta, gamma, temperature

    def forward(self, student_logits, teacher_logits, targets):
        T = self.temperature
        loss_teacher = F.cross_entropy(teacher_logits, targets) * self.alpha
        loss_student = F.cross_entropy(student_logits, targets) * self.beta
        p_T = F.softmax(teacher_logits / T, dim=1)
        p_A = F.log_softmax(student_logits / T, dim=1)
        loss_distill = F.kl_div(p_A, p_T, reduction="batchmean") * (T ** 2) * self.gamma
        return loss_teacher + loss_student + loss_distill


class AverageMeter:
    def __init__(self):
        self.sum, self.count, self.avg = 0.0, 0, 0.0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def train(train_loader, model, criterion, optimizer, args):
    losses = AverageMeter()
    model.train()
    end_time = time.time()
    for batch_idx, (inputs, targets) in enumerate(train_loader):
        inputs = inputs.to(args.device)
        targets = targets.to(args.device)

        outputs = model(inputs)
        if args.kd_enable:
            teacher_outputs, outputs = outputs
            loss = criterion(outputs, teacher_outputs, targets)
        else:
            loss = criterion(outputs, targets)
        losses.update(loss.item(), inputs.size(0))

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        if (batch_idx + 1) % args.print_freq == 0:
            print(f"[{batch_idx + 1}] loss {losses.avg:.4f} ({time.time() - end_time:.1f}s)")
    return losses.avg
