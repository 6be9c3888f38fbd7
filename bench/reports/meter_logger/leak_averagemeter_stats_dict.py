# Source: https://github.com/pytorch/pytorch/issues/194997
# Report: tracking losses in hand-written AverageMeter helpers: passing the raw loss tensor (no .detach().item()) silently keeps each step's graph alive until VRAM runs out
# Shape: a helper returns a stats dict holding the graph-attached loss; the epoch-level meter's update() does self.sum += val * n on it
# Expect: TML001 line 48
import torch
import torch.nn.functional as F


class AverageMeter:
    """Computes and stores the average and current value."""

    def __init__(self, name, fmt=":.4f"):
        self.name = name
        self.fmt = fmt
        self.reset()

    def reset(self):
        self.val = 0.0
        self.sum = 0.0
        self.count = 0
        self.avg = 0.0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def train_step(model, optimizer, images, labels):
    logits = model(images)
    loss = F.cross_entropy(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    acc = (logits.argmax(dim=1) == labels).float().mean()
    return {"loss": loss, "acc": acc}


def train_one_epoch(model, optimizer, loader, device, log_every=50):
    model.train()
    meters = {"loss": AverageMeter("Loss"), "acc": AverageMeter("Acc@1", ":.3f")}
    for step, (images, labels) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        labels = labels.to(device, non_blocking=True)
        stats = train_step(model, optimizer, images, labels)
        bs = images.size(0)
        meters["loss"].update(stats["loss"], bs)  # expect: TML001
        meters["acc"].update(stats["acc"].item(), bs)
        if step % log_every == 0:
            print(f"step {step}: loss {float(meters['loss'].avg):.4f} acc {meters['acc'].avg:.3f}")
    return {k: float(m.avg) for k, m in meters.items()}
