# Source: https://github.com/Project-MONAI/MONAI/pull/5380
# Report: CumulativeAverage.append() kept every appended value in a GPU buffer list, so calling it once per step grew GPU memory with each call until aggregate()
# Shape: a running-average helper whose append() stores each (detached, still on-GPU) value in a list attribute; the training loop appends loss and accuracy every step
# Expect: TML004 line 18
import torch
import torch.distributed as dist


class CumulativeAverage:
    def __init__(self):
        self._buffer = []

    def reset(self):
        self._buffer = []

    def append(self, val):
        val = torch.as_tensor(val).detach()
        self._buffer.append(val)  # expect: TML004

    def aggregate(self):
        if not self._buffer:
            return torch.tensor(0.0)
        data = torch.stack(self._buffer)
        if dist.is_available() and dist.is_initialized():
            gathered = [torch.zeros_like(data) for _ in range(dist.get_world_size())]
            dist.all_gather(gathered, data)
            data = torch.cat(gathered)
        return data.float().mean()


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
        run_loss.append(loss)
        run_acc.append(acc)
        if idx % 50 == 0:
            print(f"epoch {epoch} step {idx}/{len(loader)} loss {loss.item():.4f}")
    return run_loss.aggregate().item(), run_acc.aggregate().item()
