# Modelled on: https://github.com/BorealisAI/advertorch/issues/113
# Report: the attack's backward computes the gradient of the input but also fills the gradients of every trainable parameter; autograd.grad was suggested.
import torch
import torch.nn.functional as F


def fgsm(model, x, y, eps=0.03):
    x_adv = x.clone().detach().requires_grad_(True)
    loss = F.cross_entropy(model(x_adv), y)
    loss.backward()  # expect: TML020
    return (x_adv + eps * x_adv.grad.sign()).clamp(0, 1).detach()


def evaluate_robustness(model, loader):
    model.eval()
    correct = 0
    for x, y in loader:
        x_adv = fgsm(model, x.cuda(), y.cuda())
        with torch.no_grad():
            correct += (model(x_adv).argmax(1) == y.cuda()).sum().item()
    return correct / len(loader.dataset)
