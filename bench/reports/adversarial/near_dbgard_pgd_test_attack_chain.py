# Source: https://github.com/yanhong5260/DBG_ARD/blob/ceaa1abc0b7518f9c27658b6650002d885f01b54/Attacks/attackPGD_test.py
# Report: audit of DBG_ARD's PGD attack used for robust-accuracy tests: each step rebinds the adversarial batch from itself while it is still attached to the step's leaf, but the very next line clamps a .detach()ed copy and the projected batch is .detach()ed again before the next iteration, so no step's graph reaches the next one
# Shape: same attack_pgd() helper and evaluate_robust() loop; the loop-carried `adv = adv + step * sign(grad)` stays, followed by the repo's clamp(adv.detach()) and the trailing adv.detach() after the projection
# Expect: near-miss: must be silent
import time

import torch
import torch.nn as nn


def attack_pgd(model, images, labels, attack_iters=10, step_size=2 / 255.0, epsilon=8 / 255.0):
    ce_loss = nn.CrossEntropyLoss()
    adv = images.detach() + torch.zeros_like(images).uniform_(-epsilon, epsilon)
    adv = torch.clamp(adv, 0, 1)
    for _ in range(attack_iters):
        adv.requires_grad_()
        logits = model(adv)
        loss = ce_loss(logits, labels)
        (grad,) = torch.autograd.grad(loss, [adv])
        adv = adv + step_size * torch.sign(grad)
        adv = torch.clamp(adv.detach(), 0, 1)
        pert = torch.clamp(adv - images, -epsilon, epsilon)
        adv = images + pert
        adv = adv.detach()
    return adv


class Meter:
    def __init__(self):
        self.correct, self.seen = 0, 0

    def update(self, logits, labels):
        self.correct += (logits.argmax(1) == labels).sum().item()
        self.seen += labels.numel()

    @property
    def acc(self):
        return 100.0 * self.correct / max(self.seen, 1)


def evaluate_robust(model, test_loader, device="cuda", attack_iters=20, log_every=50):
    model.eval()
    meters = {"clean": Meter(), "pgd": Meter()}
    start = time.time()
    for step, (images, labels) in enumerate(test_loader):
        images, labels = images.to(device), labels.to(device)
        with torch.no_grad():
            meters["clean"].update(model(images), labels)
        adv = attack_pgd(model, images, labels, attack_iters=attack_iters)
        with torch.no_grad():
            meters["pgd"].update(model(adv), labels)
        if step % log_every == 0:
            print(f"[{step}] clean {meters['clean'].acc:.2f} pgd {meters['pgd'].acc:.2f} "
                  f"({time.time() - start:.0f}s)")
    return {name: m.acc for name, m in meters.items()}


if __name__ == "__main__":
    import torchvision
    import torchvision.transforms as T

    net = torchvision.models.resnet18(num_classes=10).cuda()
    net.load_state_dict(torch.load("student_best.pt", map_location="cuda"))
    test_set = torchvision.datasets.CIFAR10("./data", train=False, download=True, transform=T.ToTensor())
    loader = torch.utils.data.DataLoader(test_set, batch_size=256, num_workers=4)
    print(evaluate_robust(net, loader))
