# Source: https://github.com/r-gould/sslearn/blob/ba1ac9baf2373218a587530a46f220de7e20060e/sslearn/models/pretraining/dino/dino.py
# Report: audit of a self-supervised DINO learner class: step() runs the deep-copied (still requires_grad) teacher inside torch.no_grad() and only then folds teacher_out into self.center = m * self.center + (1 - m) * mean; this variant drops that no_grad, the shape the repo avoided
# Shape: the teacher forward runs with grad enabled, so the EMA centre kept on self is rebuilt every step from its previous value and an attached batch mean: each step's teacher graph is chained onto the centre
# Expect: TML005 line 52
from copy import deepcopy

import torch
import torch.nn as nn
import torch.nn.functional as F


class DINOLoss:
    def __init__(self, temp_s=0.1, temp_t=0.04):
        self.temp_s, self.temp_t = temp_s, temp_t

    def __call__(self, student, teacher, center):
        # teacher targets are sharpened, centred and treated as constants
        targets = F.softmax((teacher - center) / self.temp_t, dim=-1).detach()
        return torch.sum(-targets * F.log_softmax(student / self.temp_s, dim=-1), dim=-1).mean()


class DINO(nn.Module):
    name = "dino"

    def __init__(self, encoder, head, output_dim, lambd=0.996, center_rate=0.9):
        super().__init__()
        self.student_network = nn.Sequential(encoder, head)
        self.teacher_network = deepcopy(self.student_network)
        self.register_buffer("center", torch.zeros(output_dim))
        self.loss_func = DINOLoss()
        self.lambd, self.center_rate = lambd, center_rate

    def student_parameters(self):
        return self.student_network.parameters()

    def step(self, global_crops, local_crops):
        n_global = len(global_crops)
        views = global_crops + local_crops
        student_out = [self.student_network(v) for v in views]
        teacher_out = torch.cat([self.teacher_network(v) for v in global_crops])
        teacher_chunks = teacher_out.chunk(n_global)

        # every student view against every teacher view except the same crop
        pair_losses = [
            self.loss_func(s, t, self.center)
            for i, t in enumerate(teacher_chunks)
            for j, s in enumerate(student_out)
            if i != j
        ]

        m = self.center_rate
        self.center = m * self.center + (1 - m) * teacher_out.mean(dim=0)  # expect: TML005
        return torch.stack(pair_losses).mean()

    @torch.no_grad()
    def update(self):
        # momentum update of the teacher from the student weights
        for s, t in zip(self.student_network.parameters(), self.teacher_network.parameters()):
            t.mul_(self.lambd).add_(s.detach(), alpha=1 - self.lambd)


class Trainer:
    def __init__(self, optim, scheduler=None):
        self.optim, self.scheduler = optim, scheduler

    def train(self, model, train_loader, epochs, device="cuda"):
        model.to(device)
        losses = []
        for epoch in range(1, epochs + 1):
            epoch_losses = []
            for global_crops, local_crops in train_loader:
                global_crops = [c.to(device) for c in global_crops]
                local_crops = [c.to(device) for c in local_crops]
                loss = model.step(global_crops, local_crops)
                self.optim.zero_grad()
                loss.backward()
                self.optim.step()
                if self.scheduler is not None:
                    self.scheduler.step()
                model.update()
                epoch_losses.append(loss.item())
            losses.append(sum(epoch_losses) / len(epoch_losses))
            print(f"epoch {epoch}: loss {losses[-1]:.4f}")
        return losses
