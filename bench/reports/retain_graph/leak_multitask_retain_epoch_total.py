# Source: https://adhdecode-articles-3.pages.dev/articles/pytorch/pytorch-memory-leak-debugging-gpu/
# Report: a GPU memory-leak debugging guide: calling loss.backward(retain_graph=True) unnecessarily inside the training loop keeps each step's graph alive, and when something still references those graphs memory_allocated grows with every backward pass
# Shape: a multi-task trainer backpropagates the summed loss with retain_graph=True "to be safe" and adds the attached total into an epoch counter, so every step's retained graph (buffers included) stays referenced until the epoch ends
# Expect: TML006 line 40; TML001 line 42
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiTaskNet(nn.Module):
    def __init__(self, in_dim, n_classes, width=512):
        super().__init__()
        self.trunk = nn.Sequential(
            nn.Linear(in_dim, width), nn.GELU(), nn.Dropout(0.1),
            nn.Linear(width, width), nn.GELU(),
        )
        self.cls_head = nn.Linear(width, n_classes)
        self.reg_head = nn.Linear(width, 1)

    def forward(self, x):
        z = self.trunk(x)
        return {"logits": self.cls_head(z), "value": self.reg_head(z).squeeze(-1)}


def compute_losses(outputs, batch, w_reg):
    ce = F.cross_entropy(outputs["logits"], batch["label"])
    mse = F.mse_loss(outputs["value"], batch["target"])
    return {"ce": ce, "mse": mse, "total": ce + w_reg * mse}


def train_epoch(model, loader, optimizer, device, w_reg=0.5):
    model.train()
    epoch_total = 0.0
    per_task = {"ce": 0.0, "mse": 0.0}
    steps = 0
    for batch in loader:
        batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
        losses = compute_losses(model(batch["x"]), batch, w_reg)
        optimizer.zero_grad(set_to_none=True)
        losses["total"].backward(retain_graph=True)  # expect: TML006
        optimizer.step()
        epoch_total += losses["total"]  # expect: TML001
        per_task["ce"] += losses["ce"].item()
        per_task["mse"] += losses["mse"].item()
        steps += 1
    steps = max(steps, 1)
    return {"total": float(epoch_total) / steps, "ce": per_task["ce"] / steps, "mse": per_task["mse"] / steps}


def fit(model, loader, epochs=30, lr=1e-3, device="cuda"):
    model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    log = []
    for epoch in range(epochs):
        stats = train_epoch(model, loader, optimizer, device)
        scheduler.step()
        log.append(stats)
        print(f"epoch {epoch:3d} total {stats['total']:.4f} ce {stats['ce']:.4f} mse {stats['mse']:.4f}")
    return log
