# Source: https://github.com/gmum/adversarial_examples_ae_layers/blob/3ddeafab05535ba65adee1f36f3cf2b83a09725e/adv_attacks.py
# Report: audit: pgd_linf() writes the step through delta.data = (delta + alpha * sign(grad)).clamp(...) and zeroes delta.grad, so delta stays one fresh leaf; this is the variant that write avoided, delta rebound from its own graph-attached update
# Shape: an attack object's perturb() takes the input gradient with autograd.grad and rebinds delta = (delta + alpha * g.sign()).clamp(...), so every step's add/clamp nodes (and their saved inputs) chain onto all earlier ones for 100 iterations per batch
# Expect: TML005 line 25
import torch
import torch.nn.functional as F


class LinfPGD:
    """Untargeted L-inf PGD used to build the adversarial sample sets."""

    def __init__(self, model, epsilon=0.05, alpha=1e-2, num_iter=100):
        self.model = model
        self.epsilon = epsilon
        self.alpha = alpha
        self.num_iter = num_iter

    def perturb(self, images, labels):
        delta = torch.zeros_like(images, requires_grad=True)
        for _ in range(self.num_iter):
            logits = self.model(images + delta)
            loss = F.cross_entropy(logits, labels)
            (grad,) = torch.autograd.grad(loss, delta)
            # rebinding keeps the clamp/add history of every earlier step
            delta = (delta + self.alpha * grad.sign()).clamp(-self.epsilon, self.epsilon)  # expect: TML005
        return delta.detach()


def build_adversarial_set(model, test_loader, attack, pixel_range, noise_size, device="cuda"):
    lo, hi = pixel_range
    model.eval()
    kept = {"clean": [], "adv": [], "noisy": [], "label": []}
    counts = {"clean": 0, "adv": 0, "noisy": 0, "total": 0}
    for data, target in test_loader:
        data, target = data.to(device), target.to(device)
        with torch.no_grad():
            clean_ok = model(data).argmax(dim=1).eq(target)
        noisy = (data + noise_size * torch.randn_like(data)).clamp(lo, hi)

        perturbation = attack.perturb(data, target)
        adv = (data + perturbation).clamp(lo, hi)

        with torch.no_grad():
            adv_ok = model(adv).argmax(dim=1).eq(target)
            noisy_ok = model(noisy).argmax(dim=1).eq(target)

        counts["clean"] += clean_ok.sum().item()
        counts["adv"] += adv_ok.sum().item()
        counts["noisy"] += noisy_ok.sum().item()
        counts["total"] += target.size(0)

        # keep samples the model gets right clean and noisy, but wrong attacked
        selected = clean_ok & noisy_ok & ~adv_ok
        kept["clean"].append(data[selected].cpu())
        kept["adv"].append(adv[selected].cpu())
        kept["noisy"].append(noisy[selected].cpu())
        kept["label"].append(target[selected].cpu())

    tensors = {name: torch.cat(parts) for name, parts in kept.items()}
    return tensors, counts


def report(counts):
    total = max(counts["total"], 1)
    for name in ("clean", "adv", "noisy"):
        print(f"{name:>6} accuracy: {100.0 * counts[name] / total:.2f}%")
