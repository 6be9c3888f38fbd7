# Source: https://github.com/pmj110119/RenderOcc/issues/16
# Report: host memory kept changing/growing during NeRF-style occupancy training until the server ran out; commenting out the @functools.lru_cache on create_full_step_id fixed it
# Shape: the index tensors are rebuilt on every call; lru_cache is kept only on a helper that returns a plain int sample count
# Expect: near-miss: must be silent
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F


def create_full_step_id(shape):
    ray_id = torch.arange(shape[0]).view(-1, 1).expand(shape).flatten()
    step_id = torch.arange(shape[1]).view(1, -1).expand(shape).flatten()
    return ray_id, step_id


@functools.lru_cache(maxsize=128)
def num_ray_samples(world_len: float, step_size: float) -> int:
    return int(world_len / step_size) + 1


def sample_ray(rays_o, rays_d, step_size, world_len):
    rays_d = rays_d / rays_d.norm(dim=-1, keepdim=True)
    n_samples = num_ray_samples(world_len, step_size)
    t = torch.linspace(0, 2, n_samples, device=rays_o.device)
    ray_pts = rays_o[:, None, :] + rays_d[:, None, :] * t[None, :, None]
    inner_mask = ray_pts.norm(dim=-1) <= 1
    return ray_pts, inner_mask, t


class NerfHead(nn.Module):
    def __init__(self, step_size=0.5, world_len=200.0, fast_color_thres=1e-3):
        super().__init__()
        self.step_size = step_size
        self.world_len = world_len
        self.fast_color_thres = fast_color_thres

    def render_one_scene(self, rays_o, rays_d, density, mask):
        rays_o, rays_d = rays_o[mask], rays_d[mask]
        ray_pts, inner_mask, t = sample_ray(rays_o, rays_d, self.step_size, self.world_len)
        ray_id, step_id = create_full_step_id(ray_pts.shape[:2])
        keep = inner_mask.flatten()
        ray_id = ray_id[keep].to(rays_o.device)
        step_id = step_id[keep].to(rays_o.device)
        xyz = ray_pts[inner_mask].reshape(1, 1, 1, -1, 3)
        sigma = F.grid_sample(density[None, None], xyz, align_corners=True).flatten()
        alpha = 1 - torch.exp(-F.softplus(sigma) * self.step_size)
        weights = torch.zeros(len(rays_o), device=alpha.device).index_add_(0, ray_id, alpha)
        depth = torch.zeros_like(weights).index_add_(0, ray_id, alpha * t[step_id])
        return depth / weights.clamp_min(1e-6)

    def forward(self, rays_o, rays_d, density, masks):
        return [self.render_one_scene(o, d, density, m) for o, d, m in zip(rays_o, rays_d, masks)]
