# Source: https://github.com/TRI-ML/dgp/blob/465dda236da25c298d2e90f4a9f327ad2c54886b/dgp/utils/torch_extension/stn.py
# Report: audit of DGP's spatial-transformer helpers: meshgrid() and image_grid() are wrapped in functools.lru_cache(maxsize=None) keyed on (B, H, W, dtype, device) and return device tensors, so every batch size / resolution / device ever seen keeps a B x 3 x H x W grid alive on the GPU for the life of the process
# Shape: a self-supervised depth + pose training script: Camera.reconstruct() back-projects depth with image_grid(B, H, W, dtype, device), view synthesis warps the context frame with grid_sample, and the loop runs multi-scale with a ragged last batch, so new cache keys keep arriving
# Expect: TML012 line 11; TML012 line 23
from functools import lru_cache

import torch
import torch.nn.functional as F


@lru_cache(maxsize=None)  # expect: TML012
def meshgrid(B, H, W, dtype, device, normalized=False):
    if normalized:
        xs = torch.linspace(-1, 1, W, device=device, dtype=dtype)
        ys = torch.linspace(-1, 1, H, device=device, dtype=dtype)
    else:
        xs = torch.linspace(0, W - 1, W, device=device, dtype=dtype)
        ys = torch.linspace(0, H - 1, H, device=device, dtype=dtype)
    ys, xs = torch.meshgrid([ys, xs], indexing="ij")
    return xs.repeat([B, 1, 1]), ys.repeat([B, 1, 1])


@lru_cache(maxsize=None)  # expect: TML012
def image_grid(B, H, W, dtype, device, normalized=False):
    xs, ys = meshgrid(B, H, W, dtype, device, normalized=normalized)
    return torch.stack([xs, ys, torch.ones_like(xs)], dim=1)  # B3HW


class Camera:
    def __init__(self, K, Tcw):
        self.K, self.Tcw = K, Tcw  # Bx3x3, Bx4x4

    def reconstruct(self, depth):
        B, _, H, W = depth.shape
        grid = image_grid(B, H, W, depth.dtype, depth.device)
        rays = (self.K.inverse() @ grid.view(B, 3, -1)).view(B, 3, H, W)
        return rays * depth

    def project(self, points):
        B, _, H, W = points.shape
        cam = self.K @ (self.Tcw[:, :3, :3] @ points.view(B, 3, -1) + self.Tcw[:, :3, 3:])
        xy = cam[:, :2] / cam[:, 2:].clamp(min=1e-5)
        xn = 2 * xy[:, 0] / (W - 1) - 1
        yn = 2 * xy[:, 1] / (H - 1) - 1
        return torch.stack([xn, yn], dim=-1).view(B, H, W, 2)


def photometric_loss(target, context, depth, K, pose):
    coords = Camera(K, pose).project(Camera(K, None).reconstruct(depth))
    warped = F.grid_sample(context, coords, padding_mode="zeros", align_corners=True)
    return (warped - target).abs().mean()


def train_epoch(depth_net, pose_net, loader, optimizer, scales=(1.0, 0.5, 0.25), device="cuda"):
    depth_net.train()
    pose_net.train()
    running = 0.0
    for step, batch in enumerate(loader):
        target, context = batch["rgb"].to(device), batch["rgb_context"].to(device)
        K = batch["intrinsics"].to(device)
        inv_depths = depth_net(target)
        pose = pose_net(target, context)
        loss = 0.0
        for s, inv_depth in zip(scales, inv_depths):
            tgt = F.interpolate(target, scale_factor=s, mode="bilinear", align_corners=False)
            ctx = F.interpolate(context, scale_factor=s, mode="bilinear", align_corners=False)
            Ks = K.clone()
            Ks[:, :2] *= s
            loss = loss + photometric_loss(tgt, ctx, 1.0 / inv_depth.clamp(min=1e-3), Ks, pose)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.item()
    return running / max(len(loader), 1)
