# Source: https://github.com/gmum/adversarial_examples_ae_layers/blob/3ddeafab05535ba65adee1f36f3cf2b83a09725e/adv_attacks.py
# Report: audit: pgd_linf() writes the step through delta.data = (delta + alpha * sign(grad)).clamp(...) and zeroes delta.grad, so delta stays one fresh leaf across all 100 iterations
# Shape: as the repository: the perturbation is updated in place through .data from a detached gradient sign and delta.grad is zeroed each step, so no step links to the previous one; the driver keeps only detached CPU copies
# Expect: near-miss: must be silent
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
            loss.backward()
            # .data write: delta stays the same leaf, no history is recorded
            delta.data = (delta + self.alpha * delta.grad.detach().sign()).clamp(-self.epsilon, self.epsilon)
            delta.grad.zero_()
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

        model.zero_grad()
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
