# Source: https://github.com/yaodongyu/TRADES/blob/1d84765825a48a648b2782f29cf4002bcabcd4f3/pgd_attack_cifar10.py
# Report: audit of the TRADES white-box PGD evaluation: the test loop runs under no_grad and each attack step re-enables grad only for the loss, rebuilding X_pgd from .data so no step links to the previous one; as in the repo, the projection happens after the enable_grad block on a detached copy and the new iterate is made a fresh leaf, so each step's graph dies with its loss
# Shape: pgd_whitebox() helper returning a dict of natural/robust error counts, called per batch from eval_adv_test_whitebox() under torch.no_grad(); only the loss and torch.autograd.grad run inside `with torch.enable_grad()`; the step uses x_adv.detach() and requires_grad_(True)
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
import torchvision
import torchvision.transforms as T


def pgd_whitebox(model, X, y, epsilon=0.031, num_steps=20, step_size=0.003):
    natural_err = (model(X).argmax(dim=1) != y).sum().item()
    x_adv = X.clone().requires_grad_(True)
    for _ in range(num_steps):
        with torch.enable_grad():
            loss = F.cross_entropy(model(x_adv), y)
            grad, = torch.autograd.grad(loss, [x_adv])
        x_adv = torch.min(torch.max(x_adv.detach() + step_size * grad.sign(), X - epsilon), X + epsilon).clamp(0.0, 1.0)
        x_adv.requires_grad_(True)
    robust_err = (model(x_adv).argmax(dim=1) != y).sum().item()
    return {"natural": natural_err, "robust": robust_err, "n": y.size(0)}


def eval_adv_test_whitebox(model, device, test_loader, **attack_kwargs):
    model.eval()
    totals = {"natural": 0, "robust": 0, "n": 0}
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            stats = pgd_whitebox(model, data, target, **attack_kwargs)
            for key in totals:
                totals[key] += stats[key]
    print(f"natural error: {totals['natural'] / totals['n']:.4f}")
    print(f"robust error (PGD-20): {totals['robust'] / totals['n']:.4f}")
    return totals


def main(model_path="./checkpoints/model_cifar_wrn.pt", batch_size=200):
    from models.wideresnet import WideResNet

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    testset = torchvision.datasets.CIFAR10(root="../data", train=False, download=True, transform=T.ToTensor())
    loader = torch.utils.data.DataLoader(testset, batch_size=batch_size, shuffle=False, num_workers=2, pin_memory=True)
    model = WideResNet().to(device)
    model.load_state_dict(torch.load(model_path, map_location=device))
    eval_adv_test_whitebox(model, device, loader)


if __name__ == "__main__":
    main()
