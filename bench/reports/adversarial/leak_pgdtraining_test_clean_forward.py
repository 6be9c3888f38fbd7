# Source: https://github.com/DSE-MSU/DeepRobust/blob/025c53872705d486e02ceb0cafc4e74c7967f491/deeprobust/image/defense/pgdtraining.py
# Report: PGDtraining.test() puts the model in eval mode and runs the clean forward pass with autograd on (no no_grad anywhere in the test loop)
# Shape: model.eval() then output = model(data) per test batch outside any grad-disabled context: activations saved for a backward that never comes (the attack's own backward lives in pgd_attack)
# Expect: TML003 line 55
import torch
import torch.nn as nn
import torch.nn.functional as F


def pgd_attack(model, X, y, epsilon, num_steps, step_size, clip_min=0.0, clip_max=1.0):
    X_pgd = (X.detach() + torch.empty_like(X).uniform_(-epsilon, epsilon)).clamp(0, 1)
    X_pgd.requires_grad_(True)
    for _ in range(num_steps):
        loss = nn.CrossEntropyLoss()(model(X_pgd), y)
        loss.backward()
        eta = step_size * X_pgd.grad.data.sign()
        X_pgd = X_pgd + eta
        eta = torch.clamp(X_pgd.data - X.data, -epsilon, epsilon)
        X_pgd = torch.clamp(X.data + eta, clip_min, clip_max)
        X_pgd = X_pgd.detach()
        X_pgd.requires_grad_()
    return X_pgd


class PGDTraining:
    def __init__(self, model, device, epsilon=0.3, num_steps=40, step_size=0.01):
        self.model = model
        self.device = device
        self.epsilon = epsilon
        self.num_steps = num_steps
        self.step_size = step_size

    def adv_data(self, data, target):
        data_adv = pgd_attack(self.model, data, target, self.epsilon, self.num_steps, self.step_size)
        output = self.model(data_adv)
        return data_adv, output

    def train(self, train_loader, optimizer):
        self.model.train()
        for data, target in train_loader:
            optimizer.zero_grad()
            data, target = data.to(self.device), target.to(self.device)
            _, output = self.adv_data(data, target)
            loss = F.cross_entropy(output, target)
            loss.backward()
            optimizer.step()

    def test(self, test_loader):
        self.model.eval()
        test_loss, correct = 0.0, 0
        test_loss_adv, correct_adv = 0.0, 0
        for data, target in test_loader:
            data, target = data.to(self.device), target.to(self.device)

            output = self.model(data)  # expect: TML003
            test_loss += F.cross_entropy(output, target, reduction="sum").item()
            correct += output.argmax(1).eq(target).sum().item()

            _, output_adv = self.adv_data(data, target)
            test_loss_adv += F.cross_entropy(output_adv, target, reduction="sum").item()
            correct_adv += output_adv.argmax(1).eq(target).sum().item()

        n = len(test_loader.dataset)
        print(f"clean loss {test_loss / n:.3f} acc {correct / n:.3f} | "
              f"adv loss {test_loss_adv / n:.3f} acc {correct_adv / n:.3f}")

    def generate(self, train_loader, test_loader, epochs=100, lr=5e-4):
        optimizer = torch.optim.Adam(self.model.parameters(), lr)
        for _ in range(epochs):
            self.train(train_loader, optimizer)
            self.test(test_loader)
        return self.model
