# Source: https://github.com/BorealisAI/advertorch/pull/68
# Report: advertorch's FGM/FGSM attacks returned the adversarial examples without detach(), so the attack's computational graph stayed alive after the attack finished, giving high memory use in large-scale runs.
# Shape: fixed version: perturb() returns xadv.detach() (as in the PR), and the caller moves each adversarial batch to the CPU before keeping it, so neither graphs nor GPU tensors accumulate.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class GradientSignAttack:
    def __init__(self, predict, eps=0.3, clip_min=0.0, clip_max=1.0):
        self.predict = predict
        self.eps = eps
        self.clip_min = clip_min
        self.clip_max = clip_max
        self.loss_fn = nn.CrossEntropyLoss(reduction="sum")

    def perturb(self, x, y):
        xadv = x.clone().requires_grad_()
        outputs = self.predict(xadv)
        loss = self.loss_fn(outputs, y)
        loss.backward()
        grad_sign = xadv.grad.detach().sign()
        xadv = xadv + self.eps * grad_sign
        xadv = torch.clamp(xadv, self.clip_min, self.clip_max)
        return xadv.detach()


def collect_adversarial_set(model, loader, device, eps=0.1):
    model.eval()
    attack = GradientSignAttack(model, eps=eps)
    adv_batches, labels = [], []
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        x_adv = attack.perturb(x, y)
        adv_batches.append(x_adv.cpu())
        labels.append(y.cpu())
    return torch.cat(adv_batches), torch.cat(labels)
