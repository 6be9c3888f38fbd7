# Source: https://github.com/BorealisAI/advertorch/pull/68
# Report: advertorch's FGM/FGSM attacks returned the adversarial examples without detach(), so the attack's computational graph stayed alive after the attack finished, giving high memory use in large-scale runs.
# Shape: a one-step gradient-sign attack returns x_adv still attached to the attack graph (and through it to the input leaf holding its .grad); the evaluation loop keeps every returned batch in a list (TML001; the batches are also GPU tensors in a growing list, so TML004 would be defensible too).
# Expect: TML001 line 34
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
        return torch.clamp(xadv, self.clip_min, self.clip_max)


def collect_adversarial_set(model, loader, device, eps=0.1):
    model.eval()
    attack = GradientSignAttack(model, eps=eps)
    adv_batches, labels = [], []
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        x_adv = attack.perturb(x, y)
        adv_batches.append(x_adv)  # expect: TML001
        labels.append(y.cpu())
    return torch.cat(adv_batches), torch.cat(labels)
