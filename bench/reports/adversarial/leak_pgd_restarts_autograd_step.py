# Source: https://github.com/noameron5/fgsm-catastrophic-overfitting/blob/c521cbe375fd59a6c40d6ea2fa34b4d325eb2e84/attacks.py
# Report: audit of an FGSM catastrophic-overfitting study whose pgd_attack does its step under torch.no_grad(); this is the variant it avoided: the step takes torch.autograd.grad and rebinds X_adv outside no_grad, so each step's X_adv is a graph node hanging off the previous one (clamp buffers pile up for num_steps, and the training backward would walk the whole chain)
# Shape: same attack module; inside pgd_attack the gradient comes from torch.autograd.grad and the projected update is one rebinding of X_adv from itself with no no_grad and no detach
# Expect: TML005 line 28
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
            (grad,) = torch.autograd.grad(loss.sum(), X_adv)
            X_adv = torch.clamp(torch.min(torch.max(X_adv + alpha * grad.sign(), X - epsilon), X + epsilon), *clamp)  # expect: TML005
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
