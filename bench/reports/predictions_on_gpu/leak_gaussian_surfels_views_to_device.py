# Source: https://github.com/turandai/gaussian_surfels/issues/26
# Report: render.py ran out of GPU memory while computing PSNR over the test views; render() calls viewpoint_camera.to_device(), which moves every tensor attribute of the Camera (image, mask, mono depth) to the GPU and keeps it there, and the Camera objects live in the scene's camera list; the maintainer's fix (commit 7cb0c40) adds view.to_cpu() at the end of the loop
# Shape: the views list outlives the loop; per view, render() (same module) rebinds the view's tensor attributes to CUDA copies and get_gtMask() caches a CUDA ones-mask on the view, so after N views all N images and masks sit on the GPU
# Expect: TML004 line 71; TML004 line 73
import os

import numpy as np
import torch
from torch import nn
from torchvision.utils import save_image
from tqdm import tqdm

from diff_surfel_rasterization import rasterize_gaussians
from utils.image_utils import psnr


class Camera(nn.Module):
    def __init__(self, image, image_name, mask=None, mono=None, data_device="cuda"):
        super().__init__()
        self.image_name = image_name
        self.data_device = torch.device(data_device)
        self.original_image = image.clamp(0.0, 1.0)
        self.mask = None if mask is None else torch.from_numpy(mask)
        self.mono = None if mono is None else torch.from_numpy(mono)
        self.to_cpu()

    def to_device(self, device=None):
        device = self.data_device if device is None else device
        attr_dict = vars(self)
        tensor_keys = [k for k, v in attr_dict.items() if type(v) == torch.Tensor]
        for k in tensor_keys:
            attr_dict[k] = attr_dict[k].to(device)
        self.to(device)
        return self

    def to_cpu(self):
        attr_dict = vars(self)
        tensor_keys = [k for k, v in attr_dict.items() if type(v) == torch.Tensor]
        for k in tensor_keys:
            attr_dict[k] = attr_dict[k].cpu()
        self.cpu()
        return self

    def get_gtMask(self, with_mask=True):
        if self.mask is None or not with_mask:
            self.mask = torch.ones_like(self.original_image[:1], device="cuda")
        return self.mask

    def get_gtImage(self, bg, with_mask=True):
        if self.mask is None or not with_mask:
            return self.original_image
        mask = self.mask.to(self.original_image.device)
        return self.original_image * mask + bg[:, None, None] * (1 - mask)


def render(viewpoint_camera, gaussians, pipe, bg_color):
    viewpoint_camera.to_device()
    image, normal, depth, opac = rasterize_gaussians(viewpoint_camera, gaussians, pipe, bg_color)
    return {"render": image, "normal": normal, "depth": depth, "opac": opac}


def render_set(model_path, use_mask, name, iteration, views, gaussians, pipeline, write_image):
    render_path = os.path.join(model_path, name, "ours_{}".format(iteration), "renders")
    gts_path = os.path.join(model_path, name, "ours_{}".format(iteration), "gt")
    os.makedirs(render_path, exist_ok=True)
    os.makedirs(gts_path, exist_ok=True)

    psnr_all = []
    for idx, view in enumerate(tqdm(views, desc="Rendering progress")):
        background = torch.zeros((3), dtype=torch.float32, device="cuda")
        render_pkg = render(view, gaussians, pipeline, background)  # expect: TML004
        image, opac = render_pkg["render"], render_pkg["opac"]
        mask_gt = view.get_gtMask(use_mask)  # expect: TML004
        gt_image = view.get_gtImage(background, use_mask).cuda()
        psnr_all.append(psnr(gt_image.to(torch.float64), image.to(torch.float64)).mean().cpu().numpy())

        if write_image:
            save_image(image.cpu(), os.path.join(render_path, "{}".format(view.image_name) + ".png"))
            save_image(torch.cat([gt_image, mask_gt], 0).cpu(), os.path.join(gts_path, "{}".format(view.image_name) + ".png"))

    with open(f"{model_path}/eval_result.txt", "a") as f:
        f.write(f"{name} PSNR: {np.mean(psnr_all)}\n")


def render_sets(model_path, iteration, scene, gaussians, pipeline, write_image):
    with torch.no_grad():
        render_set(model_path, True, "test", iteration, scene.getTestCameras(), gaussians, pipeline, write_image)
