# Source: https://github.com/hbb1/2d-gaussian-splatting/blob/04323e9674e7fce7446aa01993bddd201db5aa07/train.py
# Report: audited idiom in the 2DGS training loop: the progress-bar EMAs (ema_loss_for_log, ema_dist_for_log, ema_normal_for_log) are updated inside `with torch.no_grad():` from loss.item() values
# Shape: the progress-bar EMA is updated from the live loss tensor before the no_grad block, so each iteration's EMA links to the previous one through autograd: a graph chain that grows for 30k iterations
# Expect: TML005 line 48; TML001 line 48
import torch
import torch.nn.functional as F
from random import randint
from tqdm import tqdm

from gaussian_renderer import render
from scene import Scene, GaussianModel
from utils.loss_utils import l1_loss, ssim


def training(dataset, opt, pipe, saving_iterations):
    gaussians = GaussianModel(dataset.sh_degree)
    scene = Scene(dataset, gaussians)
    gaussians.training_setup(opt)
    bg_color = [1, 1, 1] if dataset.white_background else [0, 0, 0]
    background = torch.tensor(bg_color, dtype=torch.float32, device="cuda")

    ema_loss_for_log = 0.0
    ema_dist_for_log = 0.0
    ema_normal_for_log = 0.0
    progress_bar = tqdm(range(0, opt.iterations), desc="Training progress")
    all_cameras = scene.getTrainCameras()

    for iteration in range(1, opt.iterations + 1):
        gaussians.update_learning_rate(iteration)
        if iteration % 1000 == 0:
            gaussians.oneupSHdegree()

        viewpoint_cam = all_cameras[randint(0, len(all_cameras) - 1)]
        render_pkg = render(viewpoint_cam, gaussians, pipe, background)
        image = render_pkg["render"]
        visibility_filter, radii = render_pkg["visibility_filter"], render_pkg["radii"]

        gt_image = viewpoint_cam.original_image.cuda()
        Ll1 = l1_loss(image, gt_image)
        loss = (1.0 - opt.lambda_dssim) * Ll1 + opt.lambda_dssim * (1.0 - ssim(image, gt_image))

        lambda_dist = opt.lambda_dist if iteration > 3000 else 0.0
        lambda_normal = opt.lambda_normal if iteration > 7000 else 0.0
        dist_loss = lambda_dist * render_pkg["rend_dist"].mean()
        normal_error = 1 - F.cosine_similarity(render_pkg["rend_normal"], render_pkg["surf_normal"], dim=0)
        normal_loss = lambda_normal * normal_error.mean()

        ema_loss_for_log = 0.4 * loss + 0.6 * ema_loss_for_log  # expect: TML005, TML001
        total_loss = loss + dist_loss + normal_loss
        total_loss.backward()

        with torch.no_grad():
            ema_dist_for_log = 0.4 * dist_loss.item() + 0.6 * ema_dist_for_log
            ema_normal_for_log = 0.4 * normal_loss.item() + 0.6 * ema_normal_for_log
            if iteration % 10 == 0:
                progress_bar.set_postfix({
                    "Loss": f"{ema_loss_for_log:.5f}",
                    "distort": f"{ema_dist_for_log:.5f}",
                    "normal": f"{ema_normal_for_log:.5f}",
                    "Points": f"{len(gaussians.get_xyz)}",
                })
                progress_bar.update(10)
            if iteration in saving_iterations:
                scene.save(iteration)

            if iteration < opt.densify_until_iter:
                gaussians.max_radii2D[visibility_filter] = torch.max(
                    gaussians.max_radii2D[visibility_filter], radii[visibility_filter])
                gaussians.add_densification_stats(render_pkg["viewspace_points"], visibility_filter)
                if iteration > opt.densify_from_iter and iteration % opt.densification_interval == 0:
                    gaussians.densify_and_prune(opt.densify_grad_threshold, opt.opacity_cull,
                                                scene.cameras_extent, 20)

            if iteration < opt.iterations:
                gaussians.optimizer.step()
                gaussians.optimizer.zero_grad(set_to_none=True)
