# Source: https://github.com/DvirJacobovich/Nitrogen-vacancy-center-deep-learning/blob/78b3f1caea09e26eeed50decd4c41c277d29dcaa/NV_simulated_data_process.py
# Report: audit: gradient_clipping() is called once per batch and, in its 'register_hook' mode, registers a torch.clamp hook on every model parameter each call with no handle kept, so hooks (and their closures) pile up on the parameters for the whole run
# Shape: fixed: the clamp hooks are installed once by a setup helper before the epoch loop (handles kept on a list and removed after training); the per-batch helper only does backward, optional norm clipping and step
# Expect: near-miss: must be silent
import math
import torch
import torch.nn as nn

FLAGS = {
    "clipping_grad": ["register_hook"],
    "clipping_value": 1.0,
    "max_clip_norm": 1.0,
    "verbose_every": 50,
    "epochs": 20,
}


def report_batch(batch_idx, epoch, loss, n_batches):
    print(f"epoch {epoch}/{FLAGS['epochs']} batch {batch_idx + 1}/{n_batches} MAE={loss.item():.5f}")


def install_grad_clamp(net, limit):
    """Register one clamp hook per parameter; call once before training."""
    handles = []
    for p in net.parameters():
        if p.requires_grad:
            handles.append(p.register_hook(lambda grad: torch.clamp(grad, -limit, limit)))
    return handles


def backward_and_step(err, net, optimizer):
    """Back-propagate and update; clamping already happens inside the hooks."""
    err.backward()
    if "clip_val_norm" in FLAGS["clipping_grad"]:
        torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=FLAGS["max_clip_norm"])
    optimizer.step()
    return err


def validate(model, loader, device):
    model.eval()
    crit = nn.L1Loss()
    total, count = 0.0, 0
    with torch.no_grad():
        for meas, target in loader:
            pred = model(meas.to(device))
            total += crit(pred, target.to(device)).item() * meas.size(0)
            count += meas.size(0)
    model.train()
    return total / max(count, 1)


def train_nv_model(model, train_loader, valid_loader, device="cuda"):
    criterion = nn.L1Loss()
    optimizer = torch.optim.RAdam(model.parameters(), lr=3e-4, weight_decay=1e-4)
    history = {"train": [], "valid": []}
    handles = []
    if "register_hook" in FLAGS["clipping_grad"]:
        handles = install_grad_clamp(model, FLAGS["clipping_value"])
    n_batches = math.ceil(len(train_loader.dataset) / train_loader.batch_size)
    for epoch in range(1, FLAGS["epochs"] + 1):
        for batch_idx, (meas, target) in enumerate(train_loader):
            optimizer.zero_grad()
            meas, target = meas.to(device), target.to(device)
            recon = model(meas)
            primal_loss = criterion(recon, target)
            report_batch(batch_idx, epoch, primal_loss, n_batches)
            if batch_idx % FLAGS["verbose_every"] == 0 and batch_idx:
                history["train"].append(primal_loss.item())
                history["valid"].append(validate(model, valid_loader, device))
            backward_and_step(primal_loss, model, optimizer)
    for h in handles:
        h.remove()
    return history
