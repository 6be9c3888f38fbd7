# Source: https://github.com/facebookresearch/pytorch3d/blob/093999e71fc546f0e4db67a918d139755931e9d4/docs/tutorials/fit_simple_neural_radiance_field.ipynb
# Report: the PyTorch3D NeRF tutorial logs the colour and silhouette huber errors of each Monte-Carlo ray batch into loss_history_color / loss_history_sil with float(...) and hands both lists to show_full_render every 100 iterations for plotting
# Shape: safeguard removed: the lists receive color_err / sil_err themselves, so the two loss histories (created before the 3000-iteration loop and passed on to the plotting helper) keep each step's radiance-field graph alive
# Expect: TML001 line 66; TML001 line 67
import matplotlib.pyplot as plt
import torch
from pytorch3d.renderer import FoVPerspectiveCameras


def huber(x, y, scaling=0.1):
    diff_sq = (x - y) ** 2
    loss = ((1 + diff_sq / (scaling**2)).clamp(1e-4).sqrt() - 1) * float(scaling)
    return loss


def sample_images_at_mc_locs(target_images, sampled_rays_xy):
    ba = target_images.shape[0]
    dim = target_images.shape[-1]
    spatial_size = sampled_rays_xy.shape[1:-1]
    images_sampled = torch.nn.functional.grid_sample(
        target_images.permute(0, 3, 1, 2), -sampled_rays_xy.view(ba, -1, 1, 2), align_corners=True
    )
    return images_sampled.permute(0, 2, 3, 1).view(ba, *spatial_size, dim)


def show_full_render(neural_radiance_field, renderer_grid, camera, loss_history_color, loss_history_sil):
    with torch.no_grad():
        rendered_image_silhouette, _ = renderer_grid(
            cameras=camera, volumetric_function=neural_radiance_field.batched_forward
        )
        rendered_image, rendered_silhouette = rendered_image_silhouette[0].split([3, 1], dim=-1)
    fig, ax = plt.subplots(1, 3, figsize=(15, 5))
    ax[0].plot([float(v) for v in loss_history_color], linewidth=1)
    ax[1].imshow(rendered_image.clamp(0.0, 1.0).cpu().numpy())
    ax[2].plot([float(v) for v in loss_history_sil], linewidth=1)
    return fig


def fit_nerf(neural_radiance_field, renderer_mc, renderer_grid, target_cameras,
             target_images, target_silhouettes, device, n_iter=3000, batch_size=6, lr=1e-3):
    optimizer = torch.optim.Adam(neural_radiance_field.parameters(), lr=lr)
    loss_history_color, loss_history_sil = [], []
    for iteration in range(n_iter):
        if iteration == round(n_iter * 0.75):
            optimizer = torch.optim.Adam(neural_radiance_field.parameters(), lr=lr * 0.1)
        optimizer.zero_grad()
        batch_idx = torch.randperm(len(target_cameras))[:batch_size]
        batch_cameras = FoVPerspectiveCameras(
            R=target_cameras.R[batch_idx], T=target_cameras.T[batch_idx],
            znear=target_cameras.znear[batch_idx], zfar=target_cameras.zfar[batch_idx],
            aspect_ratio=target_cameras.aspect_ratio[batch_idx], fov=target_cameras.fov[batch_idx],
            device=device,
        )
        rendered_images_silhouettes, sampled_rays = renderer_mc(
            cameras=batch_cameras, volumetric_function=neural_radiance_field
        )
        rendered_images, rendered_silhouettes = rendered_images_silhouettes.split([3, 1], dim=-1)
        silhouettes_at_rays = sample_images_at_mc_locs(
            target_silhouettes[batch_idx, ..., None], sampled_rays.xys
        )
        sil_err = huber(rendered_silhouettes, silhouettes_at_rays).abs().mean()
        colors_at_rays = sample_images_at_mc_locs(target_images[batch_idx], sampled_rays.xys)
        color_err = huber(rendered_images, colors_at_rays).abs().mean()
        loss = color_err + sil_err

        loss_history_color.append(color_err)  # expect: TML001
        loss_history_sil.append(sil_err)  # expect: TML001
        if iteration % 10 == 0:
            print(f"Iteration {iteration:05d}: loss color = {float(color_err):1.2e}")

        loss.backward()
        optimizer.step()

        if iteration % 100 == 0:
            show_idx = torch.randperm(len(target_cameras))[:1]
            show_full_render(neural_radiance_field, renderer_grid, target_cameras[show_idx],
                             loss_history_color, loss_history_sil)
    return loss_history_color, loss_history_sil
