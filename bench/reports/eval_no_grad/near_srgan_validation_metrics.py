# Source: https://github.com/leftthomas/SRGAN/issues/43
# Report: after porting the SRGAN train script to PyTorch 1.1 (volatile=True dropped), GPU memory exploded part-way through validation; fixed by wrapping the whole validation loop in torch.no_grad(), since the per-batch metrics otherwise kept their graphs
# Shape: the fix from the thread: the entire validation loop sits inside torch.no_grad(), so netG's output and the accumulated MSE carry no graph
# Expect: near-miss: must be silent
from math import log10

import torch
import torchvision.utils as utils
from tqdm import tqdm

import pytorch_ssim
from data_utils import display_transform


def validate_epoch(netG, val_loader, epoch, out_path, use_cuda=True):
    netG.eval()
    val_bar = tqdm(val_loader)
    valing_results = {"mse": 0, "ssims": 0, "psnr": 0, "ssim": 0, "batch_sizes": 0}
    val_images = []
    with torch.no_grad():
        for val_lr, val_hr_restore, val_hr in val_bar:
            batch_size = val_lr.size(0)
            valing_results["batch_sizes"] += batch_size
            lr, hr = val_lr, val_hr
            if use_cuda:
                lr = lr.cuda()
                hr = hr.cuda()
            sr = netG(lr)

            batch_mse = ((sr - hr) ** 2).mean()
            valing_results["mse"] += batch_mse * batch_size
            batch_ssim = pytorch_ssim.ssim(sr, hr).item()
            valing_results["ssims"] += batch_ssim * batch_size
            valing_results["psnr"] = 10 * log10(
                (hr.max() ** 2).item() / (valing_results["mse"] / valing_results["batch_sizes"]).item())
            valing_results["ssim"] = valing_results["ssims"] / valing_results["batch_sizes"]
            val_bar.set_description(
                "[converting LR images to SR images] PSNR: %.4f dB SSIM: %.4f"
                % (valing_results["psnr"], valing_results["ssim"]))

            val_images.extend([
                display_transform()(val_hr_restore.squeeze(0)),
                display_transform()(hr.data.cpu().squeeze(0)),
                display_transform()(sr.data.cpu().squeeze(0)),
            ])

    val_images = torch.stack(val_images)
    val_images = torch.chunk(val_images, val_images.size(0) // 15)
    for index, image in enumerate(val_images):
        grid = utils.make_grid(image, nrow=3, padding=5)
        utils.save_image(grid, out_path + "epoch_%d_index_%d.png" % (epoch, index + 1), padding=5)
    return valing_results["psnr"], valing_results["ssim"]
