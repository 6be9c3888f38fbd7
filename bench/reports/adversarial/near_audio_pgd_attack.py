# Source: https://github.com/pascalherrmann/Adversarial-Attack-Emergency-Sounds/blob/19948c787662562f55a9804052a04cc416725654/src/attacks/pgd.py
# Report: audit of the audio PGD attack: each iteration takes a signed gradient step from the previous waveform and projects it, then detaches right after the clamp (x = x.clamp(-1, 1).detach()), so no chain forms between iterations
# Shape: same Attack base class and PGD subclass; x_adv is re-marked requires_grad at the top of each iteration and rebound from its own value plus the step, ending in .detach()
# Expect: near-miss: must be silent
from abc import ABC, abstractmethod

import torch
import torch.nn.functional as F
from tqdm import tqdm


class Attack(ABC):
    """Attacks correctly classified samples and records the adversarial ones."""

    def __init__(self, model, data_loader, attack_parameters, device="cuda"):
        self.model = model.to(device)
        self.data_loader = data_loader
        self.attack_parameters = attack_parameters
        self.device = device
        self.success, self.failed, self.total = 0, 0, 0
        self.adversarial_examples = []

    @torch.no_grad()
    def predict_class(self, x):
        self.model.eval()
        return self.model(x).argmax(dim=1)

    def attack(self):
        for batch in tqdm(self.data_loader):
            audio = batch["audio"].to(self.device)
            label = batch["label"].to(self.device)
            keep = self.predict_class(audio) == label
            if keep.sum() == 0:
                continue
            audio, label = audio[keep], label[keep]
            perturbed = self.attack_sample(audio.clone(), label, **self.attack_parameters)
            pred = self.predict_class(perturbed)
            self.evaluate(audio, perturbed, pred, label)

    def evaluate(self, audio, perturbed, pred, label):
        fooled = pred != label
        self.total += label.size(0)
        self.success += fooled.sum().item()
        self.failed += (~fooled).sum().item()
        for i in torch.nonzero(fooled).flatten().tolist():
            # move to CPU, otherwise the GPU fills up with examples
            self.adversarial_examples.append((label[i].item(), audio[i].cpu(), perturbed[i].cpu()))

    def success_rate(self):
        return self.success / max(self.total, 1)

    @abstractmethod
    def attack_sample(self, x, y, **params):
        ...


class PGD(Attack):
    def attack_sample(self, x, y, epsilon=1e-3, num_iter=10, bound=0.05):
        lo, hi = (x - bound).clamp(-1, 1), (x + bound).clamp(-1, 1)
        x_adv = x.clone()
        for _ in range(num_iter):
            x_adv.requires_grad_()
            loss = F.nll_loss(self.model(x_adv), y)
            grad, = torch.autograd.grad(loss, x_adv)
            x_adv = torch.min(torch.max(x_adv + epsilon * grad.sign(), lo), hi).detach()
        return x_adv
