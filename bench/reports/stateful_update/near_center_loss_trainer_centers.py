# Source: https://github.com/louis-she/center-loss.pytorch/blob/5be899d1f622d24d7de0039dc50b54ce5a6b1151/trainer.py
# Report: audit of a face-recognition center-loss trainer: after each optimizer step the class centers (a registered buffer) are moved toward the batch features, and the repo passes features.data ("or there will be a memory leak when updating the centers"), so centers - deltas never carries a graph even though it is assigned back onto the model every step
# Shape: same Trainer.run_epoch(mode) under set_grad_enabled(mode == "train"); get_center_delta receives features.detach(); centers read from self.model.centers, rebuilt as centers - deltas and assigned back; epoch totals kept as floats
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


def compute_center_loss(features, centers, targets):
    features = features.view(features.size(0), -1)
    return F.mse_loss(features, centers[targets])


def get_center_delta(features, centers, targets, alpha):
    features = features.view(features.size(0), -1)
    classes, inverse = torch.unique(targets, return_inverse=True)
    diff = centers[targets] - features
    summed = torch.zeros(classes.size(0), diff.size(1), device=diff.device).index_add_(0, inverse, diff)
    counts = torch.bincount(inverse, minlength=classes.size(0)).float().unsqueeze(1)
    delta = torch.zeros_like(centers)
    delta[classes] = alpha * summed / (counts + 1.0)
    return delta


class Trainer:
    def __init__(self, model, optimizer, train_loader, val_loader, lamda=0.03, alpha=0.5, device="cuda"):
        self.model = model
        self.optimizer = optimizer
        self.loaders = {"train": train_loader, "validate": val_loader}
        self.history = {m: {"center": [], "cross_entropy": [], "top1acc": []} for m in self.loaders}
        self.lamda = lamda
        self.alpha = alpha
        self.device = device

    def train(self, max_epoch):
        for epoch in range(1, max_epoch + 1):
            self.run_epoch("train", epoch)
            self.run_epoch("validate", epoch)

    def run_epoch(self, mode, epoch):
        self.model.train(mode == "train")
        total_ce, total_center, matches, batches = 0.0, 0.0, 0, 0
        with torch.set_grad_enabled(mode == "train"):
            for images, targets in self.loaders[mode]:
                images, targets = images.to(self.device), targets.to(self.device)
                centers = self.model.centers
                logits, features = self.model(images)
                ce = F.cross_entropy(logits, targets)
                center = compute_center_loss(features, centers, targets)
                loss = ce + self.lamda * center
                if mode == "train":
                    self.optimizer.zero_grad()
                    loss.backward()
                    self.optimizer.step()
                    deltas = get_center_delta(features.detach(), centers, targets, self.alpha)
                    self.model.centers = centers - deltas
                total_ce += ce.item()
                total_center += center.item()
                matches += (logits.argmax(dim=1) == targets).sum().item()
                batches += 1
        record = self.history[mode]
        record["cross_entropy"].append(total_ce / batches)
        record["center"].append(total_center / batches)
        record["top1acc"].append(matches / len(self.loaders[mode].dataset))
        print(f"[{mode}:{epoch}] ce {record['cross_entropy'][-1]:.4f} "
              f"center {record['center'][-1]:.4f} top1 {record['top1acc'][-1] * 100:.2f}%")
