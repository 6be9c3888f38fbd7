# Source: https://github.com/xiaobiaodu/MVGS/blob/8718698f041fac091b1a3da05b71ce42166c276d/train.py
# Report: multi-view 3D Gaussian splatting loop: renders pipe.mv views per iteration, sums their losses into one backward, then logs an EMA of the loss, reports and densifies inside `with torch.no_grad()`
# Shape: ema_loss_for_log is loop-carried but built from loss.item() under no_grad; total_loss/imgs are re-created every iteration; training_report's test renders run under the caller's no_grad
# Expect: near-miss: must be silent
from random import randint

import torch
from tqdm import tqdm


def l1_loss(a, b):
    return torch.abs(a - b).mean()


def psnr(img1, img2):
    mse = ((img1 - img2) ** 2).view(img1.shape[0], -1).mean(1, keepdim=True)
    return 20 * torch.log10(1.0 / torch.sqrt(mse))


def training_report(tb_writer, iteration, Ll1, loss, testing_iterations, scene, render_fn, render_args):
    tb_writer.add_scalar('train_loss_patches/l1_loss', Ll1.item(), iteration)
    tb_writer.add_scalar('train_loss_patches/total_loss', loss.item(), iteration)
    if iteration in testing_iterations:
        cams = scene.getTestCameras()
        l1_test, psnr_test = 0.0, 0.0
        for viewpoint in cams:
            image = torch.clamp(render_fn(viewpoint, scene.gaussians, *render_args)["render"], 0.0, 1.0)
            gt_image = torch.clamp(viewpoint.original_image.to("cuda"), 0.0, 1.0)
            l1_test += l1_loss(image, gt_image).mean().double()
            psnr_test += psnr(image, gt_image).mean().double()
        tb_writer.add_scalar('test/l1', l1_test / len(cams), iteration)
        tb_writer.add_scalar('test/psnr', psnr_test / len(cams), iteration)


def training(opt, pipe, scene, gaussians, render, tb_writer, testing_iterations, background):
    viewpoint_stack = None
    ema_loss_for_log = 0.0
    progress_bar = tqdm(range(opt.iterations), desc="Training progress")
    for iteration in range(1, opt.iterations + 1):
        gaussians.update_learning_rate(iteration)
        total_loss = 0
        imgs = []
        for _ in range(pipe.mv):
            if not viewpoint_stack:
                viewpoint_stack = scene.getTrainCameras().copy()
            viewpoint_cam = viewpoint_stack.pop(randint(0, len(viewpoint_stack) - 1))
            render_pkg = render(viewpoint_cam, gaussians, pipe, background)
            image, radii = render_pkg["render"], render_pkg["radii"]
            visibility_filter = render_pkg["visibility_filter"]
            gt_image = viewpoint_cam.original_image.cuda()
            Ll1 = l1_loss(image, gt_image)
            loss = (1.0 - opt.lambda_dssim) * Ll1 + opt.lambda_dssim * Ll1.sqrt()
            total_loss += loss
            imgs.append([image, gt_image])
        total_loss.backward()

        with torch.no_grad():
            ema_loss_for_log = 0.4 * loss.item() + 0.6 * ema_loss_for_log
            if iteration % 10 == 0:
                progress_bar.set_postfix({"Loss": f"{ema_loss_for_log:.{7}f}"})
                progress_bar.update(10)

            training_report(tb_writer, iteration, Ll1, loss, testing_iterations, scene, render, (pipe, background))

            if iteration < opt.densify_until_iter:
                gaussians.max_radii2D[visibility_filter] = torch.max(
                    gaussians.max_radii2D[visibility_filter], radii[visibility_filter])
                if iteration % opt.densification_interval == 0:
                    errs = [torch.abs(gt - im).mean() for im, gt in imgs]
                    gaussians.densify_and_prune(opt.densify_grad_threshold, errs)

            gaussians.optimizer.step()
            gaussians.optimizer.zero_grad(set_to_none=True)
