# Source: https://github.com/liangcht/yolo_objectdetection/blob/fd4b3ce67da1cbadd62f95a9b18d6d9e998b9b52/mmod/yolo_train_session.py
# Report: the fix commit of the DDP YOLO trainer: loss_arr now receives torch.tensor(reduced_loss), a fresh CPU tensor built from the all-reduced Python float, so the run-long list no longer pins any CUDA loss or graph
# Shape: same run-long history list passed into train_one_epoch(), but what is appended is a CPU tensor made from the all-reduced float, not the attached loss
# Expect: near-miss: must be silent
import time
from datetime import datetime

import torch
import torch.distributed as dist


def to_python_float(t):
    if isinstance(t, (float, int)):
        return t
    return t.item()


def sum_across_ranks(values):
    buf = torch.tensor(values, dtype=torch.float32).cuda()
    dist.all_reduce(buf, op=dist.ReduceOp.SUM)
    return buf.cpu().numpy()


class AverageMeter:
    def __init__(self):
        self.val, self.sum, self.count, self.avg = 0.0, 0.0, 0, 0.0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def save_snapshot(model, optimizer, loss_history, epoch, prefix):
    state = {"epochs": epoch, "state_dict": model.state_dict(), "optimizer": optimizer.state_dict()}
    torch.save(state, f"{prefix}_epoch_{epoch}.pt")
    torch.save(loss_history, f"{prefix}_losses.pt")


def train_one_epoch(loader, model, criterion, optimizer, scheduler, epoch, loss_history, log_every=20):
    losses = AverageMeter()
    world_size = dist.get_world_size()
    model.train()
    start = time.time()
    for step, (images, targets) in enumerate(loader, 1):
        images = images.cuda(non_blocking=True)
        targets = targets.cuda(non_blocking=True).float()
        scheduler.step()
        optimizer.zero_grad()
        region_loss = criterion(model(images), targets)
        assert region_loss == region_loss, f"NaN loss at batch {step} of epoch {epoch}"
        region_loss.backward()
        optimizer.step()

        batch_total, reduced = sum_across_ranks([images.size(0), to_python_float(region_loss)])
        reduced = reduced / world_size
        losses.update(reduced, batch_total)
        loss_history.append(torch.tensor(reduced))
        if dist.get_rank() == 0 and step % log_every == 0:
            print(f"epoch {epoch} [{step}/{len(loader)}] {(time.time() - start) / step:.3f}s/it "
                  f"loss {losses.val:.4f} ({losses.avg:.4f})")


def main(model, criterion, optimizer, scheduler, loader, num_epochs, snapshot_every, prefix, resume=None):
    local_rank = dist.get_rank() % torch.cuda.device_count()
    start_epoch = 0
    if resume is not None:
        ckpt = torch.load(resume, map_location=lambda storage, loc: storage.cuda(local_rank))
        model.load_state_dict(ckpt["state_dict"])
        optimizer.load_state_dict(ckpt["optimizer"])
        start_epoch = ckpt["epochs"] + 1
    loss_history = []
    began = datetime.now()
    for epoch in range(start_epoch, num_epochs):
        train_one_epoch(loader, model, criterion, optimizer, scheduler, epoch, loss_history)
        hours = (datetime.now() - began).total_seconds() / 3600.0
        print(f"epoch {epoch} done after {hours:.2f}h")
        if local_rank == 0 and epoch % snapshot_every == 0:
            save_snapshot(model, optimizer, loss_history, epoch, prefix)
    if local_rank == 0:
        save_snapshot(model, optimizer, loss_history, num_epochs - 1, prefix)
