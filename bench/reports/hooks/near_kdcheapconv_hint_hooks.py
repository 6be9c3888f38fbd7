# Source: https://github.com/lehduong/Knowledge-Distillation-by-Replacing-Cheap-Conv/blob/master/models/students/base_student.py
# Report: Layer-replacement distillation wrapper: forward hooks on teacher/student blocks collect hidden outputs for a hint loss; hooks are registered in train() and removed in eval().
# Shape: _register_hooks keeps every handle in self._*_hook_handlers, train() returns early when already training, and eval() pops and .remove()s every handle, so each epoch's train()/eval() cycle leaves no hook behind; forward only resets the output lists.
# Expect: near-miss: must be silent
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class DistillStudent(nn.Module):
    def __init__(self, teacher, teacher_blocks, student_blocks):
        super().__init__()
        self.model = copy.deepcopy(teacher).eval()
        for p in self.model.parameters():
            p.requires_grad = False
        self.teacher_blocks = nn.ModuleList(teacher_blocks)
        self.student_blocks = nn.ModuleList(student_blocks)
        self.student_hidden_outputs = []
        self.teacher_hidden_outputs = []
        self._student_hook_handlers = []
        self._teacher_hook_handlers = []
        self.training = False
        self.train()

    def _register_hooks(self):
        for block in self.student_blocks:
            handler = block.register_forward_hook(lambda m, inp, out: self.student_hidden_outputs.append(out))
            self._student_hook_handlers.append(handler)
        for block in self.teacher_blocks:
            handler = block.register_forward_hook(lambda m, inp, out: self.teacher_hidden_outputs.append(out))
            self._teacher_hook_handlers.append(handler)

    def _remove_hooks(self):
        while self._student_hook_handlers:
            self._student_hook_handlers.pop().remove()
        while self._teacher_hook_handlers:
            self._teacher_hook_handlers.pop().remove()

    def _swap(self, student_mode):
        blocks = self.student_blocks if student_mode else self.teacher_blocks
        for i, block in enumerate(blocks):
            setattr(self.model, f"layer{i + 1}", block)

    def forward(self, x):
        self.student_hidden_outputs = []
        self.teacher_hidden_outputs = []
        self._swap(student_mode=False)
        with torch.no_grad():
            teacher_pred = self.model(x)
        self._swap(student_mode=True)
        student_pred = self.model(x)
        return student_pred, teacher_pred

    def train(self, mode=True):
        if not mode:
            return self.eval()
        if self.training:
            return self
        self.training = True
        for block in self.student_blocks:
            block.train()
        self._register_hooks()
        return self

    def eval(self):
        if not self.training:
            return self
        self.training = False
        for block in self.student_blocks:
            block.eval()
        self._remove_hooks()
        return self


class LayerwiseTrainer:
    def __init__(self, model, optimizer, train_loader, valid_loader, device, accumulation_steps=1):
        self.model, self.optimizer = model, optimizer
        self.train_loader, self.valid_loader = train_loader, valid_loader
        self.device, self.accumulation_steps = device, accumulation_steps

    def _train_epoch(self, epoch):
        self.model.train()
        running = 0.0
        for batch_idx, (data, target) in enumerate(self.train_loader):
            data, target = data.to(self.device), target.to(self.device)
            output_st, output_tc = self.model(data)
            hint_loss = sum(F.mse_loss(s, t) for s, t in
                            zip(self.model.student_hidden_outputs, self.model.teacher_hidden_outputs))
            loss = hint_loss / self.accumulation_steps
            loss.backward()
            if batch_idx % self.accumulation_steps == 0:
                self.optimizer.step()
                self.optimizer.zero_grad()
            running += loss.item() * self.accumulation_steps
        return running / len(self.train_loader)

    def _valid_epoch(self, epoch):
        self.model.eval()
        total = 0.0
        with torch.no_grad():
            for data, target in self.valid_loader:
                output, _ = self.model(data.to(self.device))
                total += F.cross_entropy(output, target.to(self.device)).item()
        return total / len(self.valid_loader)

    def fit(self, epochs):
        for epoch in range(1, epochs + 1):
            train_loss = self._train_epoch(epoch)
            val_loss = self._valid_epoch(epoch)
            print(f"epoch {epoch}: hint {train_loss:.4f} val {val_loss:.4f}")
