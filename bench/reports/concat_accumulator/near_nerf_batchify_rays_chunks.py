# Source: https://github.com/yenchenlin/nerf-pytorch/blob/master/run_nerf.py
# Report: nerf-pytorch renders rays in chunks to bound memory: batchify_rays() collects each chunk's outputs in per-key lists and concatenates once after the loop; test-set videos are rendered under the caller's no_grad
# Shape: all_ret[k].append(ret[k]) inside the chunk loop, `{k: torch.cat(all_ret[k], 0)}` once after it; render_path() keeps rgb.cpu().numpy() frames and is only called inside `with torch.no_grad():`
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class NeRF(nn.Module):
    def __init__(self, D=8, W=256, input_ch=63):
        super().__init__()
        layers = [nn.Linear(input_ch, W)] + [nn.Linear(W, W) for _ in range(D - 1)]
        self.pts_linears = nn.ModuleList(layers)
        self.output_linear = nn.Linear(W, 4)

    def forward(self, x):
        for layer in self.pts_linears:
            x = F.relu(layer(x))
        return self.output_linear(x)


def embed(x, multires=10):
    return torch.cat([x] + [fn(x * 2.0 ** i) for i in range(multires) for fn in (torch.sin, torch.cos)], -1)


def render_rays(ray_batch, network_fn, N_samples=64):
    rays_o, rays_d = ray_batch[:, 0:3], ray_batch[:, 3:6]
    near, far = ray_batch[:, 6:7], ray_batch[:, 7:8]
    t_vals = torch.linspace(0.0, 1.0, steps=N_samples, device=ray_batch.device)
    z_vals = near * (1.0 - t_vals) + far * t_vals
    pts = rays_o[..., None, :] + rays_d[..., None, :] * z_vals[..., :, None]
    raw = network_fn(embed(pts.reshape(-1, 3))).view(pts.shape[0], N_samples, 4)
    dists = torch.cat([z_vals[..., 1:] - z_vals[..., :-1], 1e10 * torch.ones_like(z_vals[..., :1])], -1)
    alpha = 1.0 - torch.exp(-F.relu(raw[..., 3]) * dists)
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1.0 - alpha + 1e-10], -1), -1)[:, :-1]
    weights = alpha * trans
    rgb_map = torch.sum(weights[..., None] * torch.sigmoid(raw[..., :3]), -2)
    depth_map = torch.sum(weights * z_vals, -1)
    return {"rgb_map": rgb_map, "disp_map": 1.0 / torch.clamp(depth_map, min=1e-10), "acc_map": weights.sum(-1)}


def batchify_rays(rays_flat, chunk=1024 * 32, **kwargs):
    """Render rays in smaller minibatches to avoid OOM."""
    all_ret = {}
    for i in range(0, rays_flat.shape[0], chunk):
        ret = render_rays(rays_flat[i:i + chunk], **kwargs)
        for k in ret:
            if k not in all_ret:
                all_ret[k] = []
            all_ret[k].append(ret[k])
    all_ret = {k: torch.cat(all_ret[k], 0) for k in all_ret}
    return all_ret


def render(rays, chunk, **kwargs):
    all_ret = batchify_rays(rays, chunk, **kwargs)
    return all_ret["rgb_map"], all_ret["disp_map"], all_ret["acc_map"]


def render_path(render_rays_list, chunk, render_kwargs):
    rgbs, disps = [], []
    for rays in render_rays_list:
        rgb, disp, _ = render(rays.to(device), chunk, **render_kwargs)
        rgbs.append(rgb.cpu().numpy())
        disps.append(disp.cpu().numpy())
    return np.stack(rgbs, 0), np.stack(disps, 0)


def train(rays_rgb, test_rays, N_iters=200000, N_rand=1024, chunk=1024 * 32, i_testset=50000):
    model = NeRF().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4, betas=(0.9, 0.999))
    render_kwargs = {"network_fn": model, "N_samples": 64}
    i_batch = 0
    for i in range(1, N_iters + 1):
        batch = rays_rgb[i_batch:i_batch + N_rand].to(device)
        i_batch = (i_batch + N_rand) % rays_rgb.shape[0]
        batch_rays, target_s = batch[:, :8], batch[:, 8:11]
        rgb, disp, acc = render(batch_rays, chunk, **render_kwargs)
        optimizer.zero_grad()
        img_loss = F.mse_loss(rgb, target_s)
        psnr = -10.0 * torch.log10(img_loss)
        img_loss.backward()
        optimizer.step()
        if i % 100 == 0:
            print(f"[TRAIN] Iter: {i} Loss: {img_loss.item()}  PSNR: {psnr.item()}")
        if i % i_testset == 0:
            with torch.no_grad():
                rgbs, _ = render_path(test_rays, chunk, render_kwargs)
            print("Saved test set", rgbs.shape)
