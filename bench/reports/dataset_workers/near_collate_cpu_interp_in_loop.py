# Source: https://github.com/cfzd/Ultra-Fast-Lane-Detection-v2/issues/160
# Report: the linked PyTorch notes on CUDA in multiprocessing: worker processes must not touch CUDA; do the CUDA-only step in the main process after the batch arrives.
# Shape: the collate function stays on the CPU; the CUDA-only interpolation runs in the training loop.
# Expect: near-miss: must be silent
import torch
from torch.utils.data import DataLoader


def lane_interp(points, num_rows):
    assert points.is_cuda, "the interpolation kernel runs on CUDA only"
    rows = torch.linspace(0, 1, num_rows, device=points.device)
    return torch.stack([torch.nn.functional.interpolate(p[None, None], size=num_rows, mode="linear")[0, 0] for p in points]), rows


def collate_lanes(samples):
    return torch.stack([s["image"] for s in samples]), torch.stack([s["lane_points"] for s in samples])


def train(model, dataset, optimizer, epochs=10, num_rows=72, device="cuda"):
    loader = DataLoader(dataset, batch_size=16, num_workers=8, collate_fn=collate_lanes, pin_memory=True)
    for epoch in range(epochs):
        for images, points in loader:
            lanes, _ = lane_interp(points.to(device, non_blocking=True), num_rows)
            loss = torch.nn.functional.smooth_l1_loss(model(images.to(device)), lanes)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
