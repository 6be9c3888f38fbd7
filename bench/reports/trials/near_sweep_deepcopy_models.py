# Source: https://bot.dharman.net/reports.php?id=1953130
# Report: training model_2 after model_1 failed with CUDA OOM because the kept copy.deepcopy(model_1) still lived on the GPU even after del model_1; moving the finished model to the CPU let the next one train
# Shape: same sweep, but each finished model is moved back to the CPU (model.to("cpu")) before it is kept, as the answer did; only the model being trained occupies the GPU
# Expect: near-miss: must be silent
import gc

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision


CANDIDATES = {
    "resnet50": lambda n: torchvision.models.resnet50(num_classes=n),
    "convnext_tiny": lambda n: torchvision.models.convnext_tiny(num_classes=n),
    "efficientnet_b3": lambda n: torchvision.models.efficientnet_b3(num_classes=n),
}


def train_one(model, loader, epochs, device, lr=1e-3):
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    for _ in range(epochs):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
    return model


@torch.no_grad()
def accuracy(model, loader, device):
    model.eval()
    correct = total = 0
    for x, y in loader:
        pred = model(x.to(device)).argmax(1).cpu()
        correct += int((pred == y).sum())
        total += y.numel()
    return correct / max(total, 1)


def sweep(train_loader, val_loader, num_classes, epochs=5, device="cuda"):
    saved_models, scores = [], {}
    for name, build in CANDIDATES.items():
        model = build(num_classes).to(device)
        model = train_one(model, train_loader, epochs, device)
        scores[name] = accuracy(model, val_loader, device)
        model.to("cpu")
        saved_models.append(model)
        del model
        gc.collect()
    return saved_models, scores


class Ensemble(nn.Module):
    def __init__(self, members):
        super().__init__()
        self.members = nn.ModuleList(members)

    def forward(self, x):
        return torch.stack([m(x).softmax(-1) for m in self.members]).mean(0)
