# Source: https://github.com/young-liziii/AMR-attack/blob/9222dfdbeff66b1afe77d3f65ab50b150d9a5a5e/AMR/rfml/attack/pgd.py
# Report: audit: the PGD attack on a modulation classifier rebinds the adversarial signal `_x = _x + step * sign(grad)` every iteration; the repository re-wraps it with Variable(_x) at the end of each step (which detaches); the variant it avoided keeps the attached tensor, so every PGD step hangs off the previous one and the returned signal carries the whole chain
# Shape: a pgd() helper that toggles the classifier to eval, takes the input gradient with torch.autograd.grad and rebinds the adversarial signal from itself (projected to the eps-box) without detaching; an evaluation script tallies accuracy under attack
# Expect: TML005 line 29
import numpy as np
import torch
from torch.nn.functional import cross_entropy
from torch.utils.data import DataLoader

from rfml.data import build_dataset
from rfml.nn.model import build_model


def pgd(x, y, net, k, eps=1 / 128, device="cuda"):
    """Projected gradient ascent on the raw IQ samples (Madry-style step)."""
    step = eps / 64.0
    x = x.to(device)
    y = y.to(device)
    was_training = net.training
    if was_training:
        net.eval()

    adv = x.clone().requires_grad_(True)
    for _ in range(k):
        logits = net(adv)
        loss = cross_entropy(logits, y)
        grad, = torch.autograd.grad(loss, adv)
        # ascend the loss, then project back into the eps-box around x
        adv = torch.min(torch.max(adv + step * torch.sign(grad), x - eps), x + eps)  # expect: TML005

    if was_training:
        net.train()
    return adv


def accuracy_under_attack(model, dataset, le, mask, k=15, batch_size=512, device="cuda"):
    loader = DataLoader(dataset.as_torch(le=le, mask=mask), shuffle=True, batch_size=batch_size)
    right, total = 0, 0
    preds, actual = [], []
    for x, y in loader:
        adv_x = pgd(x, y, model, k=k, device=device)
        with torch.no_grad():
            predictions = model(adv_x).argmax(dim=1).cpu()
        preds.extend(predictions.tolist())
        actual.extend(y.tolist())
        right += (predictions == y).sum().item()
        total += len(y)
    return right / total, np.array(preds), np.array(actual)


if __name__ == "__main__":
    _, _, test, le = build_dataset(dataset_name="RML2016.10a", path="RML2016.10a_dict.pkl", test_pct=0.9)
    high_snr = test.df["SNR"] >= 18
    model = build_model(model_name="cnn", input_samples=128, n_classes=len(le)).cuda()
    model.load_state_dict(torch.load("CNN.pt", map_location="cuda"))
    adv_acc, preds, actual = accuracy_under_attack(model, test, le, high_snr)
    print("accuracy under PGD: {:.3f}".format(adv_acc))
