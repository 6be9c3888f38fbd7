# Source: https://github.com/tamarott/SinGAN/issues/141
# Report: SinGAN training runs out of GPU memory in the gradient-penalty backward; the reporter suspects the many retain_graph/create_graph calls are what costs the memory
# Shape: the fix proposed in the review of SinGAN PR #117: each generator step builds its own fake, only the first backward retains the graph and the last one frees it
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


def calc_gradient_penalty(netD, real, fake, lam):
    alpha = torch.rand(1, 1, device=real.device).expand(real.size())
    interp = (alpha * real + (1 - alpha) * fake).detach().requires_grad_(True)
    d_interp = netD(interp)
    grads = torch.autograd.grad(d_interp, interp, torch.ones_like(d_interp),
                                create_graph=True, retain_graph=True)[0]
    return ((grads.norm(2, dim=1) - 1) ** 2).mean() * lam


def train_single_scale(netD, netG, real, prev, z_opt, opt):
    optD = torch.optim.Adam(netD.parameters(), lr=opt.lr_d, betas=(opt.beta1, 0.999))
    optG = torch.optim.Adam(netG.parameters(), lr=opt.lr_g, betas=(opt.beta1, 0.999))
    mse = nn.MSELoss()
    errG_log = []
    for epoch in range(opt.niter):
        noise = opt.noise_amp * torch.randn_like(prev) + prev
        for _ in range(opt.Dsteps):
            netD.zero_grad()
            errD_real = -netD(real).mean()
            errD_real.backward(retain_graph=True)
            fake = netG(noise.detach(), prev).detach()
            errD_fake = netD(fake).mean()
            errD_fake.backward(retain_graph=True)
            gp = calc_gradient_penalty(netD, real, fake, opt.lambda_grad)
            gp.backward()
            optD.step()

        for _ in range(opt.Gsteps):
            netG.zero_grad()
            fake_g = netG(noise.detach(), prev)
            errG = -netD(fake_g).mean()
            errG.backward(retain_graph=True)
            rec = netG((opt.noise_amp * z_opt + prev).detach(), prev)
            rec_loss = opt.alpha * mse(rec, real)
            rec_loss.backward()
            optG.step()
        errG_log.append(errG.item() + rec_loss.item())
    return errG_log
