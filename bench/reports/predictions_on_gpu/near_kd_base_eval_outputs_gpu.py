# Source: https://github.com/SforAiDl/KD_Lib/blob/3f1d8ecc91c6382f14f25cab8501f89ddafd3a9c/KD_Lib/KD/common/base_class.py
# Report: (fixed variant) _evaluate_model() of the distillation base class still returns every batch's logits, but moves each to host memory before keeping it, so the val set's outputs no longer pile up on the GPU
# Shape: same helper returning (outputs, accuracy) under no_grad; the list holds .cpu() copies, the accuracy is read with .item()
# Expect: near-miss: must be silent
import copy

import torch
import torch.nn as nn


class DistillerBase:
    def __init__(self, teacher, student, train_loader, val_loader, optimizer, device="cuda"):
        self.teacher = teacher.to(device)
        self.student = student.to(device)
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.optimizer = optimizer
        self.device = device
        self.ce = nn.CrossEntropyLoss()

    def calculate_kd_loss(self, s_out, t_out, y, temp=4.0, w=0.7):
        kd = nn.functional.kl_div(
            torch.log_softmax(s_out / temp, dim=1), torch.softmax(t_out / temp, dim=1), reduction="batchmean"
        )
        return w * kd * temp ** 2 + (1 - w) * self.ce(s_out, y)

    def _evaluate_model(self, model, verbose=True):
        model.eval()
        correct = 0
        outputs = []
        with torch.no_grad():
            for data, target in self.val_loader:
                data = data.to(self.device)
                target = target.to(self.device)
                output = model(data)
                if isinstance(output, tuple):
                    output = output[0]
                outputs.append(output.cpu())
                correct += output.argmax(dim=1).eq(target).sum().item()
        accuracy = correct / len(self.val_loader.dataset)
        if verbose:
            print(f"Validation Accuracy: {accuracy:.4f}")
        return outputs, accuracy

    def evaluate(self, teacher=False):
        model = copy.deepcopy(self.teacher if teacher else self.student).to(self.device)
        _, accuracy = self._evaluate_model(model)
        return accuracy

    def train_student(self, epochs=10):
        self.teacher.eval()
        best_acc, best_state = 0.0, None
        for ep in range(epochs):
            self.student.train()
            epoch_loss = 0.0
            for data, label in self.train_loader:
                data, label = data.to(self.device), label.to(self.device)
                with torch.no_grad():
                    t_out = self.teacher(data)
                loss = self.calculate_kd_loss(self.student(data), t_out, label)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                epoch_loss += loss.item()
            val_acc = self.evaluate(teacher=False)
            if val_acc > best_acc:
                best_acc, best_state = val_acc, copy.deepcopy(self.student.state_dict())
            print(f"Epoch {ep + 1}: loss {epoch_loss / len(self.train_loader):.4f} val acc {val_acc:.4f}")
        if best_state is not None:
            self.student.load_state_dict(best_state)
        return best_acc
