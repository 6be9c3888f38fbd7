# Source: https://github.com/noameron5/fgsm-catastrophic-overfitting/blob/c521cbe375fd59a6c40d6ea2fa34b4d325eb2e84/attacks.py
# Report: audit of an FGSM catastrophic-overfitting study (correct in a tricky way): pgd_attack rebinds X_adv from its own previous value every step, but the step and the projection run inside torch.no_grad(), and requires_grad_(True) is set again at the top of each step, so no graph links one step to the next
# Shape: pgd_attack with random start and restarts keeps the max-loss examples; an RS-FGSM training epoch and evaluate_robustness (forward under no_grad) call the attacks
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


def fgsm_attack(model, X, y, epsilon, clamp=(0, 1)):
    delta = torch.zeros_like(X).uniform_(-epsilon, epsilon)
    X_adv = torch.clamp(X + delta, *clamp).detach().requires_grad_(True)
    loss = F.cross_entropy(model(X_adv), y)
    loss.backward()
    X_adv = torch.clamp(X + epsilon * X_adv.grad.sign(), *clamp)
    return X_adv.detach()


def pgd_attack(model, X, y, epsilon, alpha, num_steps, restarts=1, clamp=(0, 1)):
    max_loss = torch.zeros(y.shape[0], device=X.device)
    max_X_adv = X.clone().detach()
    for _ in range(restarts):
        X_adv = X.clone().detach() + torch.zeros_like(X).uniform_(-epsilon, epsilon)
        X_adv = torch.clamp(X_adv, *clamp)
        for _ in range(num_steps):
            X_adv.requires_grad_(True)
            loss = F.cross_entropy(model(X_adv), y, reduction="none")
            loss.sum().backward()
            with torch.no_grad():
                X_adv = X_adv + alpha * X_adv.grad.sign()
                X_adv = torch.clamp(X + torch.clamp(X_adv - X, -epsilon, epsilon), *clamp)
        with torch.no_grad():
            loss = F.cross_entropy(model(X_adv), y, reduction="none")
            better = loss > max_loss
            max_loss[better] = loss[better]
            max_X_adv[better] = X_adv[better]
    return max_X_adv


def train_fgsm_epoch(model, loader, optimizer, epsilon, device="cuda"):
    model.train()
    total_loss, correct, seen = 0.0, 0, 0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        X_adv = fgsm_attack(model, inputs, targets, epsilon)
        optimizer.zero_grad()
        outputs = model(X_adv)
        loss = F.cross_entropy(outputs, targets)
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
        correct += outputs.argmax(1).eq(targets).sum().item()
        seen += targets.size(0)
    return total_loss / len(loader), 100.0 * correct / seen


def evaluate_robustness(model, loader, epsilon, num_steps=50, device="cuda"):
    model.eval()
    correct, total = 0, 0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        X_adv = pgd_attack(model, inputs, targets, epsilon, epsilon / 4, num_steps)
        with torch.no_grad():
            predicted = model(X_adv).argmax(1)
        correct += predicted.eq(targets).sum().item()
        total += targets.size(0)
    return 100.0 * correct / total
