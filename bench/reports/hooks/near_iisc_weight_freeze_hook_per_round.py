# Source: https://github.com/shubham303/IIscAssignment/blob/a82b94c2f30150823dc1bc10dde3feb3d1bb463c/hooks/weightfreezehook.py
# Report: audit of the ResNet weight-freezing assignment (gradient-mask hook per conv/linear weight, each holding a weight-sized mask); this is the fixed iterative variant: each freezing round first removes the handles registered by the previous round, and the last round's handles are removed after training, so only one mask hook per weight is ever live
# Shape: same WeightFreezeHook class and iterative_freeze() schedule loop; the round keeps the RemovableHandle of every register_hook in a list, calls .remove() on the previous round's handles before registering new ones, and clears them once the schedule is done
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class WeightFreezeHook:
    """Zeroes the gradient of every weight whose magnitude is below the cutoff."""

    def __init__(self, w, cutoff):
        self.mask = (w.detach().abs() > cutoff).to(w.dtype)

    def __call__(self, grad):
        return grad * self.mask


def prunable_weights(model):
    return [m.weight for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]


def cutoff_for(weights, percent):
    flat = torch.cat([w.detach().abs().flatten() for w in weights])
    k = max(int(percent * flat.numel()), 1)
    return flat.kthvalue(k).values.item()


def train_epoch(net, loader, optimizer, criterion, device):
    net.train()
    running, seen = 0.0, 0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        optimizer.zero_grad()
        loss = criterion(net(images), labels)
        loss.backward()
        optimizer.step()
        running += loss.item() * images.size(0)
        seen += images.size(0)
    return running / max(seen, 1)


@torch.no_grad()
def evaluate(net, loader, device):
    net.eval()
    correct, seen = 0, 0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        correct += (net(images).argmax(1) == labels).sum().item()
        seen += labels.numel()
    return correct / max(seen, 1)


def iterative_freeze(net, train_loader, val_loader, schedule=(0.2, 0.4, 0.5, 0.6),
                     epochs_per_round=2, lr=0.01, device="cuda"):
    net = net.to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)
    weights = prunable_weights(net)
    history, handles = [], []
    for rnd, percent in enumerate(schedule):
        cutoff = cutoff_for(weights, percent)
        for handle in handles:
            handle.remove()
        handles = [w.register_hook(WeightFreezeHook(w, cutoff)) for w in weights]
        for epoch in range(epochs_per_round):
            train_loss = train_epoch(net, train_loader, optimizer, criterion, device)
            print(f"round {rnd} ({percent:.0%} frozen) epoch {epoch}: loss {train_loss:.4f}")
        history.append({"round": rnd, "percent": percent, "cutoff": cutoff,
                        "val_acc": evaluate(net, val_loader, device)})
    for handle in handles:
        handle.remove()
    return history
