# Source: https://github.com/rosinality/stylegan2-pytorch/blob/bef283a1c24087da704d16c30abc8e36e63efa0e/train.py
# Report: audit of a StyleGAN2 trainer: the path-length regulariser computes the running mean from the attached path lengths (the penalty backpropagates through it) but returns path_mean.detach(), so the mean_path_length the loop feeds back next step carries no history (the repo's shape)
# Shape: same loop, helper and rebinding of mean_path_length from g_path_regularize's result; only the returned mean is detached; lazy R1 and EMA via .data in-place as in the repo
# Expect: near-miss: must be silent
import math

import torch
import torch.nn.functional as F
from torch import autograd


def requires_grad(model, flag=True):
    for p in model.parameters():
        p.requires_grad = flag


def accumulate(ema_model, model, decay=0.999):
    ema_params = dict(ema_model.named_parameters())
    for name, p in model.named_parameters():
        ema_params[name].data.mul_(decay).add_(p.data, alpha=1 - decay)


def d_logistic_loss(real_pred, fake_pred):
    return F.softplus(-real_pred).mean() + F.softplus(fake_pred).mean()


def d_r1_loss(real_pred, real_img):
    (grad_real,) = autograd.grad(real_pred.sum(), real_img, create_graph=True)
    return grad_real.pow(2).reshape(grad_real.shape[0], -1).sum(1).mean()


def g_path_regularize(fake_img, latents, mean_path_length, decay=0.01):
    noise = torch.randn_like(fake_img) / math.sqrt(fake_img.shape[2] * fake_img.shape[3])
    (grad,) = autograd.grad((fake_img * noise).sum(), latents, create_graph=True)
    path_lengths = grad.pow(2).sum(2).mean(1).sqrt()
    path_mean = mean_path_length + decay * (path_lengths.mean() - mean_path_length)
    path_penalty = (path_lengths - path_mean).pow(2).mean()
    return path_penalty, path_mean.detach(), path_lengths


def train(args, loader, generator, discriminator, g_optim, d_optim, g_ema, device="cuda"):
    mean_path_length = 0
    history = []
    for i in range(args.iter):
        real_img = next(loader).to(device)
        requires_grad(generator, False)
        requires_grad(discriminator, True)
        noise = torch.randn(args.batch, args.latent, device=device)
        fake_img, _ = generator([noise])
        d_loss = d_logistic_loss(discriminator(real_img), discriminator(fake_img))
        discriminator.zero_grad()
        d_loss.backward()
        d_optim.step()
        if i % args.d_reg_every == 0:
            real_img.requires_grad = True
            real_pred = discriminator(real_img)
            r1_loss = d_r1_loss(real_pred, real_img)
            discriminator.zero_grad()
            (args.r1 / 2 * r1_loss * args.d_reg_every).backward()
            d_optim.step()

        requires_grad(generator, True)
        requires_grad(discriminator, False)
        noise = torch.randn(args.batch, args.latent, device=device)
        fake_img, _ = generator([noise])
        g_loss = F.softplus(-discriminator(fake_img)).mean()
        generator.zero_grad()
        g_loss.backward()
        g_optim.step()
        if i % args.g_reg_every == 0:
            noise = torch.randn(max(1, args.batch // 2), args.latent, device=device)
            fake_img, latents = generator([noise], return_latents=True)
            path_loss, mean_path_length, path_lengths = g_path_regularize(fake_img, latents, mean_path_length)
            generator.zero_grad()
            (args.path_regularize * args.g_reg_every * path_loss).backward()
            g_optim.step()

        accumulate(g_ema, generator)
        loss_dict = {"d": d_loss.item(), "g": g_loss.item(), "mean_path": float(mean_path_length)}
        history.append(loss_dict)
        if i % 100 == 0:
            print(i, loss_dict)
    return history
