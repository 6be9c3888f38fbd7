# Source: https://github.com/yoshitomo-matsubara/torchdistill/blob/03d74d2fd048cf081a3c9ade4fecf8111396a4d7/torchdistill/core/forward_hook.py
# Report: torchdistill's ForwardHookManager registers forward hooks on teacher/student hint layers once per stage and removes them in clear(); here a FitNets step re-attaches the hint hooks on every batch
# Shape: distill_step() calls attach_hints() per batch; add_hook() registers a new forward hook on the persistent teacher/student submodule and only appends the handle to hook_list, which clear() empties after the last epoch: hooks pile up batch after batch
# Expect: TML007 line 39
import torch
import torch.nn as nn
import torch.nn.functional as F


def get_module(root, module_path):
    module = root
    for name in module_path.split("."):
        module = getattr(module, name)
    return module


def make_io_hook(io_dict, module_path, requires_input, requires_output):
    def forward_hook(module, func_input, func_output):
        if isinstance(func_input, tuple) and len(func_input) == 1:
            func_input = func_input[0]
        sub_io_dict = io_dict.setdefault(module_path, dict())
        if requires_input:
            sub_io_dict["input"] = func_input
        if requires_output:
            sub_io_dict["output"] = func_output
    return forward_hook


class ForwardHookManager:
    def __init__(self, target_device):
        self.target_device = torch.device(target_device) if isinstance(target_device, str) else target_device
        self.io_dict = dict()
        self.hook_list = list()

    def add_hook(self, module, module_path, requires_input=False, requires_output=True):
        unwrapped = module.module if isinstance(module, nn.parallel.DistributedDataParallel) else module
        sub_module = get_module(unwrapped, module_path)
        hook = make_io_hook(self.io_dict, module_path, requires_input, requires_output)
        handle = sub_module.register_forward_hook(hook)  # expect: TML007
        self.hook_list.append((module_path, handle))

    def pop_io_dict(self):
        popped = dict()
        for module_path, module_io_dict in self.io_dict.items():
            popped[module_path] = {io_type: module_io_dict.pop(io_type) for io_type in list(module_io_dict.keys())}
        return popped

    def clear(self):
        self.io_dict.clear()
        for _, handle in self.hook_list:
            handle.remove()
        self.hook_list.clear()


class FitNetsBox:
    def __init__(self, teacher, student, regressor, optimizer, device, hint_pairs):
        self.teacher, self.student, self.regressor = teacher, student, regressor
        self.optimizer = optimizer
        self.device = device
        self.hint_pairs = hint_pairs
        self.teacher_hooks = ForwardHookManager(device)
        self.student_hooks = ForwardHookManager(device)

    def attach_hints(self):
        for teacher_path, student_path in self.hint_pairs:
            self.teacher_hooks.add_hook(self.teacher, teacher_path)
            self.student_hooks.add_hook(self.student, student_path)

    def distill_step(self, images, targets):
        self.attach_hints()
        with torch.no_grad():
            self.teacher(images)
        logits = self.student(images)
        teacher_io = self.teacher_hooks.pop_io_dict()
        student_io = self.student_hooks.pop_io_dict()
        hint_loss = 0.0
        for teacher_path, student_path in self.hint_pairs:
            hint = self.regressor(student_io[student_path]["output"])
            hint_loss = hint_loss + F.mse_loss(hint, teacher_io[teacher_path]["output"])
        loss = F.cross_entropy(logits, targets) + hint_loss
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def train(self, data_loader, num_epochs):
        self.teacher.eval()
        self.student.train()
        for epoch in range(num_epochs):
            running = 0.0
            for images, targets in data_loader:
                images, targets = images.to(self.device), targets.to(self.device)
                running += self.distill_step(images, targets)
            print(f"epoch {epoch}: loss {running / len(data_loader):.4f}")
        self.teacher_hooks.clear()
        self.student_hooks.clear()
