# Source: https://github.com/Project-MONAI/MONAI/pull/5380
# Report: CumulativeAverage.append() kept every appended value in a GPU buffer list, so calling it once per step grew GPU memory with each call until aggregate()
# Shape: the refactored helper keeps only a running sum and count (fixed-size tensors updated in place with detached values), as proposed in the PR discussion
# Expect: near-miss: must be silent
import torch
import torch.distributed as dist


class CumulativeAverage:
    def __init__(self):
        self.reset()

    def reset(self):
        self.sum = None
        self.count = None

    def append(self, val, count=1):
        val = torch.as_tensor(val).detach().float()
        if self.sum is None:
            self.sum = torch.zeros_like(val)
            self.count = torch.zeros_like(val)
        self.sum += val * count
        self.count += count

    def aggregate(self):
        if self.sum is None:
            return torch.tensor(0.0)
        total = torch.stack([self.sum, self.count])
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(total)
        return total[0] / total[1].clamp(min=1)


def train_epoch(model, loader, optimizer, scaler, epoch, device):
    model.train()
    criterion = torch.nn.BCEWithLogitsLoss()
    run_loss = CumulativeAverage()
    run_acc = CumulativeAverage()
    for idx, batch_data in enumerate(loader):
        data = batch_data["image"].to(device)
        target = batch_data["label"].to(device)
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda"):
            logits = model(data)
            loss = criterion(logits, target)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        acc = (logits.sigmoid().sum(1).detach().round() == target.sum(1).round()).float().mean()
        run_loss.append(loss, count=data.shape[0])
        run_acc.append(acc, count=data.shape[0])
        if idx % 50 == 0:
            print(f"epoch {epoch} step {idx}/{len(loader)} loss {loss.item():.4f}")
    return run_loss.aggregate().item(), run_acc.aggregate().item()
