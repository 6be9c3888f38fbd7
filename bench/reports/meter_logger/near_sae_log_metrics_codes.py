# Source: https://github.com/KempnerInstitute/overcomplete/issues/5
# Report: with monitoring=2 the SAE training helper _log_metrics appended a slice of the detached codes z to the logs dict every step; the tensors stayed on the GPU, so GPU memory grew for the whole run
# Shape: the fix proposed in the thread: the subsample of z is moved to the CPU before it is appended; every other log entry is a Python float
# Expect: near-miss: must be silent
import time
from collections import defaultdict

import torch


def l2(x, dims=None):
    return x.norm(dim=dims) if dims is not None else x.norm()


class DeadCodeTracker:
    def __init__(self, nb_concepts, device):
        self.alive_features = torch.zeros(nb_concepts, dtype=torch.bool, device=device)

    def update(self, z):
        self.alive_features |= (z > 0).any(dim=0)

    def get_dead_ratio(self):
        return 1 - self.alive_features.float().mean().item()


def _log_metrics(monitoring, logs, model, z, loss, optimizer):
    if monitoring > 0:
        logs["lr"].append(optimizer.param_groups[0]["lr"])
        logs["step_loss"].append(loss.item())
    if monitoring > 1:
        # keep a subsample of the codes for later inspection, off the GPU
        logs["z"].append(z.detach().cpu()[::10])
        logs["z_l2"].append(l2(z).item())
        for name, param in model.named_parameters():
            if param.grad is not None:
                logs[f"params_norm_{name}"].append(l2(param).item())
                logs[f"params_grad_norm_{name}"].append(l2(param.grad).item())


def train_sae(model, dataloader, criterion, optimizer, nb_epochs=20, clip_grad=1.0,
              monitoring=2, device="cuda"):
    logs = defaultdict(list)
    for epoch in range(nb_epochs):
        model.train()
        start_time = time.time()
        epoch_loss, batch_count = 0.0, 0
        dead_tracker = None
        for batch in dataloader:
            batch_count += 1
            x = batch[0].to(device, non_blocking=True)
            optimizer.zero_grad()
            z_pre, z, x_hat = model(x)
            loss = criterion(x, x_hat, z_pre, z, model.get_dictionary())
            if dead_tracker is None:
                dead_tracker = DeadCodeTracker(z.shape[1], device)
            dead_tracker.update(z)
            loss.backward()
            if clip_grad:
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip_grad)
            optimizer.step()
            if monitoring:
                epoch_loss += loss.item()
                _log_metrics(monitoring, logs, model, z, loss, optimizer)
        if monitoring and batch_count > 0:
            logs["avg_loss"].append(epoch_loss / batch_count)
            logs["dead_features"].append(dead_tracker.get_dead_ratio())
            logs["time_epoch"].append(time.time() - start_time)
    return logs
