# Source: https://github.com/graphdeco-inria/gaussian-splatting/blob/main/train.py
# Report: 3DGS training loop: the progress-bar EMA of the loss is built from loss.item() inside the post-backward no_grad block, and the periodic test report runs under that same caller-side no_grad
# Shape: ema_loss_for_log is loop-carried but only ever mixes Python floats; training_report() accumulates l1_test/psnr_test from renders, but it is only called inside `with torch.no_grad():`
# Expect: near-miss: must be silent
from random import randint

import torch
import torch.nn as nn
from tqdm import tqdm


def l1_loss(a, b):
    return torch.abs(a - b).mean()


def psnr(a, b):
    mse = ((a - b) ** 2).view(a.shape[0], -1).mean(1, keepdim=True)
    return 20 * torch.log10(1.0 / torch.sqrt(mse))


class GaussianRasterizer(nn.Module):
    def __init__(self, n_points, h=64, w=64):
        super().__init__()
        self.xyz = nn.Parameter(torch.randn(n_points, 3))
        self.color = nn.Parameter(torch.rand(n_points, 3))
        self.proj = nn.Linear(n_points, h * w)
        self.h, self.w = h, w

    def forward(self, cam_feat):
        weights = torch.sigmoid(self.xyz @ cam_feat)
        img = self.proj((self.color * weights[:, None]).t())
        return {"render": img.view(3, self.h, self.w), "radii": weights}


class Camera:
    def __init__(self, name):
        self.image_name = name
        self.feat = torch.randn(3, device="cuda")
        self.original_image = torch.rand(3, 64, 64)


def training_report(tb_writer, iteration, Ll1, loss, testing_iterations, test_cams, train_cams, raster):
    if tb_writer:
        tb_writer.add_scalar("train_loss_patches/l1_loss", Ll1.item(), iteration)
        tb_writer.add_scalar("train_loss_patches/total_loss", loss.item(), iteration)
    if iteration in testing_iterations:
        for name, cams in (("test", test_cams), ("train", train_cams[5:30:5])):
            l1_test = 0.0
            psnr_test = 0.0
            for viewpoint in cams:
                image = torch.clamp(raster(viewpoint.feat)["render"], 0.0, 1.0)
                gt_image = torch.clamp(viewpoint.original_image.to("cuda"), 0.0, 1.0)
                l1_test += l1_loss(image, gt_image).mean().double()
                psnr_test += psnr(image, gt_image).mean().double()
            l1_test /= max(len(cams), 1)
            psnr_test /= max(len(cams), 1)
            print("\n[ITER {}] Evaluating {}: L1 {} PSNR {}".format(iteration, name, l1_test, psnr_test))


def training(iterations=30000, lambda_dssim=0.2, testing_iterations=(7000, 30000), tb_writer=None):
    raster = GaussianRasterizer(4096).cuda()
    optimizer = torch.optim.Adam(raster.parameters(), lr=1.6e-4, eps=1e-15)
    train_cams = [Camera("train_%d" % i) for i in range(100)]
    test_cams = [Camera("test_%d" % i) for i in range(12)]
    viewpoint_stack = None
    ema_loss_for_log = 0.0
    progress_bar = tqdm(range(iterations), desc="Training progress")
    for iteration in range(1, iterations + 1):
        if not viewpoint_stack:
            viewpoint_stack = train_cams.copy()
        viewpoint_cam = viewpoint_stack.pop(randint(0, len(viewpoint_stack) - 1))

        render_pkg = raster(viewpoint_cam.feat)
        image = render_pkg["render"]
        gt_image = viewpoint_cam.original_image.cuda()
        Ll1 = l1_loss(image, gt_image)
        loss = (1.0 - lambda_dssim) * Ll1 + lambda_dssim * (image - gt_image).pow(2).mean()
        loss.backward()

        with torch.no_grad():
            ema_loss_for_log = 0.4 * loss.item() + 0.6 * ema_loss_for_log
            if iteration % 10 == 0:
                progress_bar.set_postfix({"Loss": f"{ema_loss_for_log:.{7}f}"})
                progress_bar.update(10)
            training_report(tb_writer, iteration, Ll1, loss, testing_iterations, test_cams, train_cams, raster)
            if iteration < iterations:
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
    progress_bar.close()


if __name__ == "__main__":
    training()
