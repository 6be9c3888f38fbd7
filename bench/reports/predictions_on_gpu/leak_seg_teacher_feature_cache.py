# Source: https://github.com/Uranussss/dental_kd/blob/8dcf1f4477ea5b0991a609508d70f3bcb1f0f425/train_kd.py
# Report: a dental-image segmentation distillation script runs the teacher once over the whole train set (after teacher.eval(), no no_grad) and caches every batch's output dict of features/logits back on the GPU for the epochs that follow
# Shape: the teacher forward returns a dict; a helper copies each entry through numpy and back to the device, and fetch_teacher_outputs appends the dict to a list that it returns to the trainer
# Expect: TML004 line 27; TML003 line 25
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def move_outputs(outputs, target):
    """Copy every entry of the teacher's output dict to `target`."""
    return {k: torch.from_numpy(v.detach().cpu().numpy()).to(target) for k, v in outputs.items()}


def fetch_teacher_outputs(teacher, loader):
    teacher.eval()
    cached = []
    for images, _ in loader:
        images = images.to(device)
        out = teacher(images)  # expect: TML003
        # {"feas": decoder features, "logits": mask logits}
        cached.append(move_outputs(out, device))  # expect: TML004
    return cached


class FitNetRegressor(nn.Module):
    def __init__(self, s_ch, t_ch):
        super().__init__()
        self.proj = nn.Conv2d(s_ch, t_ch, kernel_size=1)

    def forward(self, t_out, s_out):
        return t_out["feas"], self.proj(s_out["feas"])


def distill_loss(t_feat, s_feat, s_logits, masks, beta=0.005):
    seg = F.binary_cross_entropy_with_logits(s_logits, masks)
    return seg + beta * F.mse_loss(s_feat, t_feat)


def train_kd(student, teacher, loader, epochs=60, lr=1e-3):
    assist = FitNetRegressor(64, 32).to(device)
    params = list(student.parameters()) + list(assist.parameters())
    optimizer = torch.optim.Adam(params, lr=lr)
    tic = time.time()
    teacher_outputs = fetch_teacher_outputs(teacher, loader)
    print(f"teacher outputs ready after {math.ceil(time.time() - tic)} s")
    history = []
    for epoch in range(epochs):
        student.train()
        epoch_loss = 0.0
        for i, (images, masks) in enumerate(loader):
            images, masks = images.to(device), masks.to(device)
            s_out = student(images)
            t_feat, s_feat = assist(teacher_outputs[i], s_out)
            loss = distill_loss(t_feat, s_feat, s_out["logits"], masks)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item()
        history.append(epoch_loss / len(loader))
        print(f"epoch {epoch}: loss {history[-1]:.4f}")
    return history
