# Source: https://github.com/facebookresearch/dino/blob/main/main_dino.py
# Report: DINO keeps an EMA "center" of teacher outputs on the loss module, updated in a @torch.no_grad() method; the teacher is a frozen copy updated by EMA under no_grad
# Shape: DINOLoss.forward calls self.update_center(teacher_output) every step; the self-referencing EMA of self.center runs inside a @torch.no_grad()-decorated method (and the teacher's parameters do not require grad), so the buffer never carries a graph
# Expect: near-miss: must be silent
import copy
import math
import sys

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


class SmoothedValue:
    def __init__(self):
        self.total, self.count = 0.0, 0

    def update(self, value, n=1):
        self.total += value * n
        self.count += n

    @property
    def global_avg(self):
        return self.total / max(self.count, 1)


def build_teacher(student):
    teacher = copy.deepcopy(student)
    # there is no backpropagation through the teacher, so no need for gradients
    for p in teacher.parameters():
        p.requires_grad = False
    return teacher.cuda()


class DINOLoss(nn.Module):
    def __init__(self, out_dim, ncrops, teacher_temps, student_temp=0.1, center_momentum=0.9):
        super().__init__()
        self.student_temp = student_temp
        self.center_momentum = center_momentum
        self.ncrops = ncrops
        self.register_buffer("center", torch.zeros(1, out_dim))
        self.teacher_temp_schedule = np.asarray(teacher_temps)

    def forward(self, student_output, teacher_output, epoch):
        student_out = (student_output / self.student_temp).chunk(self.ncrops)
        temp = self.teacher_temp_schedule[epoch]
        teacher_out = F.softmax((teacher_output - self.center) / temp, dim=-1)
        teacher_out = teacher_out.detach().chunk(2)

        total_loss, n_loss_terms = 0, 0
        for iq, q in enumerate(teacher_out):
            for v in range(len(student_out)):
                if v == iq:
                    continue
                loss = torch.sum(-q * F.log_softmax(student_out[v], dim=-1), dim=-1)
                total_loss += loss.mean()
                n_loss_terms += 1
        total_loss /= n_loss_terms
        self.update_center(teacher_output)
        return total_loss

    @torch.no_grad()
    def update_center(self, teacher_output):
        batch_center = torch.sum(teacher_output, dim=0, keepdim=True)
        dist.all_reduce(batch_center)
        batch_center = batch_center / (len(teacher_output) * dist.get_world_size())
        # ema update of the center
        self.center = self.center * self.center_momentum + batch_center * (1 - self.center_momentum)


def train_one_epoch(student, teacher, dino_loss, data_loader, optimizer, momentum_schedule, epoch):
    meters = {"loss": SmoothedValue(), "lr": SmoothedValue()}
    for it, (images, _) in enumerate(data_loader):
        it = len(data_loader) * epoch + it
        images = [im.cuda(non_blocking=True) for im in images]
        teacher_output = teacher(torch.cat(images[:2]))
        student_output = student(torch.cat(images))
        loss = dino_loss(student_output, teacher_output, epoch)

        if not math.isfinite(loss.item()):
            sys.exit(1)

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        # EMA update for the teacher weights
        with torch.no_grad():
            m = momentum_schedule[it]
            for param_q, param_k in zip(student.parameters(), teacher.parameters()):
                param_k.data.mul_(m).add_((1 - m) * param_q.detach().data)

        meters["loss"].update(loss.item())
        meters["lr"].update(optimizer.param_groups[0]["lr"])
    return {k: meter.global_avg for k, meter in meters.items()}
