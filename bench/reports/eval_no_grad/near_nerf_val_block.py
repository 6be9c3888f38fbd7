# Source: https://github.com/krrish94/nerf-pytorch/blob/0f6f745b18a8495901101de5cd3f2b2e51afed40/train_nerf.py
# Report: the NeRF training loop renders a full validation image every N iterations inside `with torch.no_grad()`
# Shape: coarse/fine models set to eval, the whole-image render and its losses run under no_grad and are only logged via .item() / detached images
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn.functional as F


def render_rays(coarse_net, fine_net, origins, dirs, n_samples=64):
    t = torch.linspace(0.0, 1.0, n_samples, device=origins.device)
    pts = origins[:, None, :] + dirs[:, None, :] * t[None, :, None]
    rgb_c = coarse_net(pts.reshape(-1, 3)).reshape(origins.shape[0], n_samples, 3).mean(1)
    rgb_f = None
    if fine_net is not None:
        rgb_f = fine_net(pts.reshape(-1, 3)).reshape(origins.shape[0], n_samples, 3).mean(1)
    return rgb_c, rgb_f


def to_image(t):
    return np.moveaxis(t.detach().cpu().numpy(), -1, 0)


def fit(cfg, images, poses, i_train, i_val, rays_fn, coarse_net, fine_net, writer, device="cuda"):
    params = list(coarse_net.parameters()) + list(fine_net.parameters())
    optimizer = torch.optim.Adam(params, lr=cfg.lr)
    for it in range(cfg.train_iters):
        coarse_net.train()
        fine_net.train()
        idx = np.random.choice(i_train)
        target = images[idx].to(device)
        origins, dirs = rays_fn(poses[idx].to(device))
        sel = np.random.choice(origins.shape[0], size=cfg.num_random_rays, replace=False)
        rgb_c, rgb_f = render_rays(coarse_net, fine_net, origins[sel], dirs[sel])
        coarse_loss = F.mse_loss(rgb_c, target.reshape(-1, 3)[sel])
        fine_loss = F.mse_loss(rgb_f, target.reshape(-1, 3)[sel])
        loss = coarse_loss + fine_loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        psnr = -10.0 * np.log10(loss.item())
        writer.add_scalar("train/loss", loss.item(), it)
        writer.add_scalar("train/psnr", psnr, it)

        if it % cfg.validate_every == 0:
            coarse_net.eval()
            fine_net.eval()
            with torch.no_grad():
                vidx = np.random.choice(i_val)
                vtarget = images[vidx].to(device)
                vorigins, vdirs = rays_fn(poses[vidx].to(device))
                vrgb_c, vrgb_f = render_rays(coarse_net, fine_net, vorigins, vdirs)
                vloss = F.mse_loss(vrgb_c, vtarget.reshape(-1, 3)) + F.mse_loss(vrgb_f, vtarget.reshape(-1, 3))
                writer.add_scalar("validation/loss", vloss.item(), it)
                writer.add_image("validation/rgb_fine", to_image(vrgb_f.reshape(vtarget.shape)), it)
