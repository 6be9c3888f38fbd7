# Source: https://mindfulchase.com/explore/troubleshooting-tips/machine-learning-and-ai-tools/troubleshooting-pytorch-cuda-memory-leaks-and-out-of-memory-errors.html
# Report: a CUDA memory-leak troubleshooting guide: loss logging code that keeps the loss tensor (losses.append(loss)) retains the computation graph and memory climbs over epochs; the fix logs loss.item()
# Shape: same LossTracker and segmentation loop, but the loop passes loss.item(), so the tracker only ever holds Python floats
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class LossTracker:
    def __init__(self, window=200):
        self.total = 0.0
        self.count = 0
        self.recent = []
        self.window = window

    def update(self, value, n=1):
        self.total += value * n
        self.count += n
        self.recent.append(value)

    @property
    def avg(self):
        return self.total / max(self.count, 1)

    def smoothed(self):
        tail = self.recent[-self.window:]
        return sum(float(v) for v in tail) / max(len(tail), 1)


def dice_loss(logits, masks, eps=1.0):
    probs = logits.sigmoid()
    inter = (probs * masks).sum(dim=(1, 2, 3))
    union = probs.sum(dim=(1, 2, 3)) + masks.sum(dim=(1, 2, 3))
    return (1 - (2 * inter + eps) / (union + eps)).mean()


def train(model, loader, epochs=40, lr=2e-4, device="cuda", log_every=100):
    model.to(device)
    bce = nn.BCEWithLogitsLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.cuda.amp.GradScaler()
    for epoch in range(epochs):
        model.train()
        tracker = LossTracker()
        for step, (images, masks) in enumerate(loader):
            images, masks = images.to(device), masks.to(device)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.float16):
                logits = model(images)
                loss = bce(logits, masks) + dice_loss(logits.float(), masks)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            tracker.update(loss.item(), images.size(0))
            if step % log_every == 0:
                print(f"epoch {epoch} step {step} loss {tracker.smoothed():.4f}")
        print(f"epoch {epoch} mean loss {tracker.avg:.4f}")
    return model
