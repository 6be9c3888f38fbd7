# Source: https://github.com/Aditya-Shandilya1182/DINO/blob/af5ba8d5e5f8b9f463060aa00e8a0a21b820781b/dino_loss.py
# Report: audit: DINOLoss.update_center rebinds self.center from its own previous value and the teacher output with no no_grad of its own; it is safe only because train.py runs the teacher under no_grad, and this variant drops that
# Shape: teacher forward outside no_grad (a deepcopy whose params still require grad), target probs detached for the loss, so backward never frees the teacher graph that the running centre chains step after step
# Expect: TML005 line 29
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class DINOLoss(nn.Module):
    def __init__(self, out_dim, teacher_temp=0.04, student_temp=0.1, center_momentum=0.9):
        super().__init__()
        self.teacher_temp = teacher_temp
        self.student_temp = student_temp
        self.center_momentum = center_momentum
        self.register_buffer("center", torch.zeros(1, out_dim))

    def forward(self, student_out, teacher_out):
        log_p_student = F.log_softmax(student_out / self.student_temp, dim=-1)
        p_teacher = F.softmax((teacher_out - self.center) / self.teacher_temp, dim=-1)
        loss = torch.sum(-p_teacher.detach() * log_p_student, dim=-1).mean()
        self.update_center(teacher_out)
        return loss

    def update_center(self, teacher_out):
        batch_center = teacher_out.mean(dim=0, keepdim=True)
        self.center = self.center * self.center_momentum + batch_center * (1 - self.center_momentum)  # expect: TML005


def momentum_update(teacher, student, m=0.996):
    with torch.no_grad():
        for p_t, p_s in zip(teacher.parameters(), student.parameters()):
            p_t.mul_(m).add_(p_s.detach(), alpha=1 - m)


def train_dino(student, loader, out_dim, num_epochs=20, lr=5e-4, device="cuda"):
    student = student.to(device)
    teacher = copy.deepcopy(student)
    loss_fn = DINOLoss(out_dim).to(device)
    optimizer = torch.optim.AdamW(student.parameters(), lr=lr)
    history = []
    for epoch in range(num_epochs):
        student.train()
        teacher.train()
        epoch_loss, n_batches = 0.0, 0
        for (view_a, view_b), _ in loader:
            view_a = view_a.to(device, non_blocking=True)
            view_b = view_b.to(device, non_blocking=True)
            student_out = student(view_a)
            teacher_out = teacher(view_b)
            loss = loss_fn(student_out, teacher_out)

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            momentum_update(teacher, student)

            epoch_loss += loss.item()
            n_batches += 1
        history.append(epoch_loss / max(n_batches, 1))
        print(f"epoch {epoch + 1}/{num_epochs}  loss {history[-1]:.4f}")
    return student, history
