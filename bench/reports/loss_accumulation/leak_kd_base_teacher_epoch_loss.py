# Source: https://github.com/SforAiDl/KD_Lib/blob/3f1d8ecc91c6382f14f25cab8501f89ddafd3a9c/KD_Lib/KD/common/base_class.py
# Report: the distillation base class's train_teacher() adds the live CE loss into epoch_loss without .item() and appends that tensor to loss_arr every epoch, so graph-attached sums outlive the loop (train_student() in the same class already uses .item())
# Shape: a distiller class with train_teacher/train_student methods and a SummaryWriter; the leaking total is also logged and plotted at the end
# Expect: TML001 line 51; TML001 line 57
import copy

import matplotlib.pyplot as plt
import torch
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter


class Distiller:
    def __init__(self, teacher, student, train_loader, val_loader, opt_t, opt_s, temp=4.0, device="cuda", logdir=None):
        self.teacher = teacher.to(device)
        self.student = student.to(device)
        self.train_loader, self.val_loader = train_loader, val_loader
        self.opt_t, self.opt_s = opt_t, opt_s
        self.temp = temp
        self.device = device
        self.ce = nn.CrossEntropyLoss().to(device)
        self.kl = nn.KLDivLoss(reduction="batchmean").to(device)
        self.writer = SummaryWriter(logdir) if logdir else None

    def calculate_kd_loss(self, s_out, t_out, y):
        soft = self.kl(torch.log_softmax(s_out / self.temp, 1), torch.softmax(t_out / self.temp, 1))
        return 0.5 * soft * self.temp ** 2 + 0.5 * self.ce(s_out, y)

    @torch.no_grad()
    def accuracy(self, model):
        model.eval()
        correct = sum((model(x.to(self.device)).argmax(1) == y.to(self.device)).sum().item() for x, y in self.val_loader)
        model.train()
        return correct / len(self.val_loader.dataset)

    def train_teacher(self, epochs=20):
        self.teacher.train()
        loss_arr, best_acc = [], 0.0
        best_state = copy.deepcopy(self.teacher.state_dict())
        for ep in range(epochs):
            epoch_loss = 0.0
            correct = 0
            for data, label in self.train_loader:
                data, label = data.to(self.device), label.to(self.device)
                out = self.teacher(data)
                correct += out.argmax(dim=1).eq(label).sum().item()
                loss = self.ce(out, label)
                self.opt_t.zero_grad()
                loss.backward()
                self.opt_t.step()
                epoch_loss += loss  # expect: TML001
            val_acc = self.accuracy(self.teacher)
            if val_acc > best_acc:
                best_acc, best_state = val_acc, copy.deepcopy(self.teacher.state_dict())
            if self.writer:
                self.writer.add_scalar("Training loss/Teacher", epoch_loss, ep)
            loss_arr.append(epoch_loss)  # expect: TML001
            print(f"Epoch: {ep + 1}, Loss: {epoch_loss}, Accuracy: {correct / len(self.train_loader.dataset)}")
        self.teacher.load_state_dict(best_state)
        plt.plot([float(v) for v in loss_arr])

    def train_student(self, epochs=10):
        self.teacher.eval()
        self.student.train()
        loss_arr = []
        for ep in range(epochs):
            epoch_loss = 0.0
            for data, label in self.train_loader:
                data, label = data.to(self.device), label.to(self.device)
                with torch.no_grad():
                    t_out = self.teacher(data)
                loss = self.calculate_kd_loss(self.student(data), t_out, label)
                self.opt_s.zero_grad()
                loss.backward()
                self.opt_s.step()
                epoch_loss += loss.item()
            loss_arr.append(epoch_loss)
            print(f"Epoch: {ep + 1}, Loss: {epoch_loss}, Val acc: {self.accuracy(self.student)}")
        return loss_arr
