# Source: https://github.com/DmitryUlyanov/deep-image-prior/blob/HEAD/denoising.py
# Report: audit of the Deep Image Prior denoising loop: the smoothed reconstruction out_avg is an EMA over every iteration's network output; the repository builds it from out.detach(), this variant drops the detach
# Shape: out_avg is rebound each step from its previous value and the attached output, so every step's autograd graph links to all earlier steps; losses and PSNR are still logged as floats
# Expect: TML005 line 41
import numpy as np
import torch
import torch.nn as nn


def psnr(ref, est):
    mse = np.mean((ref - est) ** 2)
    return 10.0 * np.log10(1.0 / max(mse, 1e-10))


def get_noise(depth, spatial, device, scale=0.1):
    return torch.rand(1, depth, *spatial, device=device) * scale


def denoise(net, img_noisy, img_clean, num_iter=3000, lr=0.01, input_depth=32,
            reg_noise_std=1.0 / 30, exp_weight=0.99, show_every=100, device="cuda"):
    noisy_t = torch.from_numpy(img_noisy)[None].to(device)
    net_input_saved = get_noise(input_depth, img_noisy.shape[1:], device)
    noise = net_input_saved.clone()
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    mse = nn.MSELoss()

    out_avg = None
    last_net = None
    psnr_noisy_last = 0.0
    history = {"loss": [], "psnr_gt": [], "psnr_gt_sm": []}

    for i in range(num_iter):
        optimizer.zero_grad()
        net_input = net_input_saved + noise.normal_() * reg_noise_std
        out = net(net_input)

        # smoothed reconstruction, reported as PSNR_gt_sm in the paper's plots
        if out_avg is None:
            out_avg = out
        else:
            out_avg = out_avg * exp_weight + out * (1 - exp_weight)  # expect: TML005

        total_loss = mse(out, noisy_t)
        total_loss.backward()

        out_np = out.detach().cpu().numpy()[0]
        psnr_noisy = psnr(img_noisy, out_np)
        history["loss"].append(total_loss.item())
        if i % show_every == 0:
            history["psnr_gt"].append(psnr(img_clean, out_np))
            history["psnr_gt_sm"].append(psnr(img_clean, out_avg.detach().cpu().numpy()[0]))

        # backtracking: fall back to the last good weights when PSNR collapses
        if last_net is not None and psnr_noisy - psnr_noisy_last < -5:
            for saved, param in zip(last_net, net.parameters()):
                param.data.copy_(saved.to(device))
            continue
        last_net = [p.detach().cpu() for p in net.parameters()]
        psnr_noisy_last = psnr_noisy
        optimizer.step()

    return out_avg.detach().cpu().numpy()[0], history
