# Source: https://github.com/ingra14m/Deformable-3D-Gaussians/commit/7830e994632416b52f58f0f2dae5813ee8598960
# Report: "Fix bugs of oom error in metrics.py": the test-view metric loop appended the raw LPIPS(vgg) score of every rendered view; LPIPS's trainable lin layers keep each score's graph, so the VGG feature differences of every view stayed on the GPU until OOM; the fix appends lpips_fn(...).detach()
# Shape: close variant of the upstream fix (which appends .detach()): the per-view metrics run under torch.no_grad() and the LPIPS score is stored as a Python float (.item()), so neither a graph nor a GPU tensor outlives the view
# Expect: near-miss: must be silent
import json
import os
from argparse import ArgumentParser
from pathlib import Path

import lpips
import torch
import torchvision.transforms.functional as tf
from PIL import Image
from tqdm import tqdm

from utils.image_utils import psnr
from utils.loss_utils import ssim


def readImages(renders_dir, gt_dir):
    renders = []
    gts = []
    image_names = []
    for fname in sorted(os.listdir(renders_dir)):
        render = Image.open(renders_dir / fname)
        gt = Image.open(gt_dir / fname)
        renders.append(tf.to_tensor(render).unsqueeze(0)[:, :3, :, :])
        gts.append(tf.to_tensor(gt).unsqueeze(0)[:, :3, :, :])
        image_names.append(fname)
    return renders, gts, image_names


def evaluate(model_paths, lpips_fn, device):
    full_dict = {}
    per_view_dict = {}
    for scene_dir in model_paths:
        print("Scene:", scene_dir)
        full_dict[scene_dir] = {}
        per_view_dict[scene_dir] = {}
        test_dir = Path(scene_dir) / "test"

        for method in os.listdir(test_dir):
            if not method.startswith("ours"):
                continue
            print("Method:", method)
            method_dir = test_dir / method
            renders, gts, image_names = readImages(method_dir / "renders", method_dir / "gt")

            ssims = []
            psnrs = []
            lpipss = []
            with torch.no_grad():
                for idx in tqdm(range(len(renders)), desc="Metric evaluation progress"):
                    render = renders[idx].to(device)
                    gt = gts[idx].to(device)
                    ssims.append(ssim(render, gt).item())
                    psnrs.append(psnr(render, gt).item())
                    lpipss.append(lpips_fn(render, gt).item())

            ssim_mean = torch.tensor(ssims).mean().item()
            psnr_mean = torch.tensor(psnrs).mean().item()
            lpips_mean = torch.tensor(lpipss).mean().item()
            print("  SSIM : {:>12.7f}".format(ssim_mean))
            print("  PSNR : {:>12.7f}".format(psnr_mean))
            print("  LPIPS: {:>12.7f}".format(lpips_mean))
            full_dict[scene_dir][method] = {"SSIM": ssim_mean, "PSNR": psnr_mean, "LPIPS": lpips_mean}
            per_view_dict[scene_dir][method] = {
                "SSIM": dict(zip(image_names, ssims)),
                "PSNR": dict(zip(image_names, psnrs)),
                "LPIPS": dict(zip(image_names, lpipss)),
            }

        with open(scene_dir + "/results.json", "w") as fp:
            json.dump(full_dict[scene_dir], fp, indent=True)
        with open(scene_dir + "/per_view.json", "w") as fp:
            json.dump(per_view_dict[scene_dir], fp, indent=True)


if __name__ == "__main__":
    device = torch.device("cuda:0")
    torch.cuda.set_device(device)
    lpips_fn = lpips.LPIPS(net="vgg").to(device)

    parser = ArgumentParser(description="Training script parameters")
    parser.add_argument("--model_paths", "-m", required=True, nargs="+", type=str, default=[])
    args = parser.parse_args()
    evaluate(args.model_paths, lpips_fn, device)
