# Source: https://github.com/DaniMS-ZGZ/ScanGAN360/blob/main/train.py
# Report: ScanGAN360's unrolled-GAN discriminator step calls d_loss.backward(create_graph=True) before optimizerD.step(); the regular d_loop uses a plain backward and nothing ever differentiates through the D update
# Shape: backward(create_graph=True) leaves graph-carrying tensors in every D parameter's .grad (parameter -> .grad -> grad_fn -> parameter cycle) and the unrolled step never sets them back to None
# Expect: TML013 line 37
import copy

import numpy as np
import torch
import torch.nn as nn

RANDOM_Z = 32
UNROLLED_STEPS = 5
D_STEPS = 1
LAMBDA_BCE = 1.0


def smooth_labels(b_size, value, low, high, device, scale=True):
    labels = torch.full((b_size,), value, dtype=torch.float, device=device)
    noise = torch.from_numpy(np.random.uniform(low, high, size=(b_size,))).float().to(device)
    return labels * noise if scale else labels + noise


def d_unrolled_loop(netD, netG, optimizerD, criterion, image, scanpath, device, real_label, fake_label, noise=None):
    optimizerD.zero_grad()
    b_size = len(scanpath)
    d_real_decision = netD(image.to(device), scanpath.to(device))
    d_real_error = criterion(d_real_decision.view(-1), smooth_labels(b_size, real_label, 0.85, 1.15, device))

    if noise is None:
        noise = torch.randn(b_size, RANDOM_Z, device=device)
    with torch.no_grad():
        d_fake_data = netG(image.to(device), noise)
    d_fake_decision = netD(image.to(device), d_fake_data)
    d_fake_error = criterion(d_fake_decision.view(-1), smooth_labels(b_size, fake_label, 0.0, 0.15, device, scale=False))

    d_loss = d_real_error + d_fake_error
    d_loss.backward(create_graph=True)  # expect: TML013
    optimizerD.step()
    return d_real_error.cpu().item(), d_fake_error.cpu().item()


def g_loop(netD, netG, optimizerD, optimizerG, criterion, image, scanpath, device, real_label, fake_label):
    optimizerG.zero_grad()
    optimizerD.zero_grad()
    b_size = len(scanpath)
    noise = torch.randn(b_size, RANDOM_Z, device=device)

    if UNROLLED_STEPS > 0:
        backup = copy.deepcopy(netD.state_dict())
        for _ in range(UNROLLED_STEPS):
            d_unrolled_loop(netD, netG, optimizerD, criterion, image, scanpath, device,
                            real_label, fake_label, noise=noise)

    g_fake_data = netG(image.to(device), noise)
    dg_fake_decision = netD(image.to(device), g_fake_data)
    target = smooth_labels(b_size, 1.0, 0.85, 1.15, device)
    g_error = LAMBDA_BCE * criterion(dg_fake_decision.view(-1), target)
    g_error.backward()
    optimizerG.step()

    if UNROLLED_STEPS > 0:
        netD.load_state_dict(backup)
        del backup
    return g_error.cpu().item()


def train(netG, netD, dataloader, criterion, optimizerD, optimizerG, device, num_epochs, d_loop):
    G_losses, D_real_losses, D_fake_losses = [], [], []
    for epoch in range(num_epochs):
        for i, (image, scanpath) in enumerate(dataloader):
            d_infos = [d_loop(netD, netG, optimizerD, optimizerG, criterion, image, scanpath, device, 1.0, 0.0)
                       for _ in range(D_STEPS)]
            d_real_loss, d_fake_loss = np.mean(d_infos, 0)
            g_loss = g_loop(netD, netG, optimizerD, optimizerG, criterion, image, scanpath, device, 1.0, 0.0)
            if i % 500 == 0:
                print(f"[{epoch}][{i}] D_real {d_real_loss:.4f} D_fake {d_fake_loss:.4f} G {g_loss:.4f}")
                G_losses.append(g_loss)
                D_real_losses.append(d_real_loss)
                D_fake_losses.append(d_fake_loss)
        torch.save(netG.state_dict(), f"generator_{epoch}.pth")
        torch.save(netD.state_dict(), f"discriminator_{epoch}.pth")
    return G_losses, D_real_losses, D_fake_losses
