# Source: https://github.com/raven38/EfficientDynamic3DGaussian/blob/c79a9f00970f293e6ff354e71c43c13f4191a676/train.py
# Report: audited correct idiom: the dynamic-3DGS training loop keeps exponential moving averages of the total and the optical-flow loss for the progress bar; the flow loss is the int 0 before iteration 3000 and a graph-attached tensor afterwards, so the repo converts it with a hasattr(.item) check inside torch.no_grad()
# Shape: kept as in the repo: both EMAs are updated inside the no_grad block from Python floats (loss.item(), and fl = flow_loss.item() when it is a tensor), so no loop-carried value ever holds a graph
# Expect: near-miss: must be silent
import torch
from random import randint
from tqdm import tqdm

from gaussian_renderer import render, render_flow
from utils.loss_utils import l1_loss, ssim


def flow_term(viewpoint_cam, gaussians, pipe, bg, iteration, time_delta, key):
    flow = viewpoint_cam.kwargs[key].cuda().permute(2, 0, 1)
    mask = viewpoint_cam.kwargs[key + "_mask"].cuda().unsqueeze(0)
    rendered = render_flow(viewpoint_cam, gaussians, pipe, bg, itr=iteration, time_delta=time_delta)["render"][:2, ...]
    flow = flow / (torch.max(torch.sqrt(torch.square(flow).sum(-1))) + 1e-5)
    rendered = rendered / (torch.max(torch.sqrt(torch.square(rendered).sum(-1))) + 1e-5)
    return torch.sum(torch.abs(flow - rendered) * mask) / (torch.sum(mask) + 1e-8) / flow.shape[-1]


def training_report(tb_writer, iteration, Ll1, loss, elapsed):
    if tb_writer:
        tb_writer.add_scalar("train_loss_patches/l1_loss", Ll1.item(), iteration)
        tb_writer.add_scalar("train_loss_patches/total_loss", loss.item(), iteration)
        tb_writer.add_scalar("iter_time", elapsed, iteration)


def training(opt, pipe, scene, gaussians, background, white_background, tb_writer):
    iter_start = torch.cuda.Event(enable_timing=True)
    iter_end = torch.cuda.Event(enable_timing=True)
    viewpoint_stack = None
    ema_loss_for_log = 0.0
    ema_flow_loss_for_log = 0.0
    progress_bar = tqdm(range(0, opt.iterations), desc="Training progress")
    for iteration in range(1, opt.iterations + 1):
        iter_start.record()
        gaussians.update_learning_rate(iteration)
        if not viewpoint_stack:
            viewpoint_stack = scene.getTrainCameras().copy()
        viewpoint_cam = viewpoint_stack.pop(randint(0, len(viewpoint_stack) - 1))

        render_pkg = render(viewpoint_cam, gaussians, pipe, background, itr=iteration)
        image, viewspace_point_tensor = render_pkg["render"], render_pkg["viewspace_points"]
        visibility_filter, radii = render_pkg["visibility_filter"], render_pkg["radii"]
        gt_image = viewpoint_cam.original_image.cuda()
        Ll1 = l1_loss(image, gt_image)
        lasso_loss = torch.nanmean(torch.abs(gaussians.get_xyz[:, 1:, :]))
        flow_loss = 0
        if iteration >= 3000 and viewpoint_cam.kwargs["fwd_flow"] is not None:
            flow_loss += flow_term(viewpoint_cam, gaussians, pipe, white_background, iteration, scene.time_delta, "fwd_flow")
        if iteration >= 3000 and viewpoint_cam.kwargs["bwd_flow"] is not None:
            flow_loss += flow_term(viewpoint_cam, gaussians, pipe, white_background, iteration, -scene.time_delta, "bwd_flow")

        loss = (1.0 - opt.lambda_dssim) * Ll1 + opt.lambda_dssim * (1.0 - ssim(image, gt_image))
        loss = loss + opt.lambda_lasso * lasso_loss + opt.lambda_flow * flow_loss
        loss.backward()
        iter_end.record()

        with torch.no_grad():
            ema_loss_for_log = 0.4 * loss.item() + 0.6 * ema_loss_for_log
            fl = flow_loss.item() if hasattr(flow_loss, "item") else flow_loss
            ema_flow_loss_for_log = 0.4 * fl + 0.6 * ema_flow_loss_for_log
            if iteration % 10 == 0:
                progress_bar.set_postfix({"Loss": f"{ema_loss_for_log:.{7}f}", "Flow loss": f"{ema_flow_loss_for_log:.{7}f}"})
                progress_bar.update(10)
            training_report(tb_writer, iteration, Ll1, loss, iter_start.elapsed_time(iter_end))

            if iteration < opt.densify_until_iter:
                gaussians.max_radii2D[visibility_filter] = torch.max(gaussians.max_radii2D[visibility_filter], radii[visibility_filter])
                gaussians.add_densification_stats(viewspace_point_tensor, visibility_filter)
                if iteration > opt.densify_from_iter and iteration % opt.densification_interval == 0:
                    gaussians.densify_and_prune(opt.densify_grad_threshold, 0.005, scene.cameras_extent, 20)
            if iteration < opt.iterations:
                gaussians.optimizer.step()
                gaussians.optimizer.zero_grad(set_to_none=True)
    progress_bar.close()
