# Source: https://github.com/isaac0804/Ling-Ling/blob/f4a350fb9a3b732435ed920f893e1050281dbea8/loss.py
# Report: audit of a DINO-style self-distillation loss for MIDI embeddings: forward calls self.update_center(teacher_output), which rebinds self.center from its previous value; the repo decorates update_center with @torch.no_grad(), and freezes the teacher; this near-miss keeps both
# Shape: same self-referencing self.center update in a helper called from forward, but the helper is decorated with @torch.no_grad(), so the new center carries no graph
# Expect: near-miss: must be silent
import copy

import torch
import torch.nn.functional as F
from torch import nn
from tqdm import tqdm


class GlobalLoss(nn.Module):
    def __init__(self, out_dim, student_temp=0.1, teacher_temp=0.04, center_momentum=0.9):
        super().__init__()
        self.student_temp = student_temp
        self.teacher_temp = teacher_temp
        self.center_momentum = center_momentum
        self.register_buffer("center", torch.zeros(1, out_dim))

    def forward(self, student_output, teacher_output):
        student_lsm = F.log_softmax(student_output / self.student_temp, dim=-1)
        teacher_sm = F.softmax((teacher_output - self.center) / self.teacher_temp, dim=-1).detach()
        loss = torch.sum(-teacher_sm * student_lsm, dim=-1).mean()
        self.update_center(teacher_output)
        return loss

    @torch.no_grad()
    def update_center(self, teacher_output):
        batch_center = teacher_output.mean(dim=0, keepdim=True)
        self.center = self.center * self.center_momentum + batch_center * (1 - self.center_momentum)


def ema_update(student, teacher, momentum):
    with torch.no_grad():
        for p_s, p_t in zip(student.parameters(), teacher.parameters()):
            p_t.mul_(momentum).add_((1 - momentum) * p_s)


def train(student, loader, epochs=20, lr=1e-3, teacher_momentum=0.98, device="cuda"):
    student = student.to(device).train()
    teacher = copy.deepcopy(student)
    for p in teacher.parameters():
        p.requires_grad = False
    criterion = GlobalLoss(out_dim=16).to(device)
    optimizer = torch.optim.Adam(student.parameters(), lr=lr)
    best = float("inf")
    for epoch in range(1, epochs + 1):
        running_loss, n_terms = 0.0, 0
        for view_a, view_b in tqdm(loader, ncols=100, desc=f"epoch {epoch}"):
            view_a, view_b = view_a.to(device), view_b.to(device)
            optimizer.zero_grad()
            loss = criterion(student(view_a), teacher(view_b)) + criterion(student(view_b), teacher(view_a))
            loss.backward()
            optimizer.step()
            ema_update(student, teacher, teacher_momentum)
            running_loss += loss.item()
            n_terms += 2
        epoch_loss = running_loss / max(n_terms, 1)
        if epoch_loss < best:
            best = epoch_loss
            torch.save(teacher.state_dict(), f"checkpoints/teacher_epoch{epoch}_{epoch_loss:.3f}.pt")
        print(f"Epoch {epoch}: loss {epoch_loss:.4f}")
    return teacher
