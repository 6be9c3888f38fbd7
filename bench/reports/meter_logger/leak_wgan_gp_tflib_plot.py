# Source: https://github.com/caogang/wgan-gp/blob/master/gan_cifar10.py
# Report: WGAN-GP CIFAR-10 trainer logs critic/generator costs through tflib.plot, a module-level dict logger that keeps every value since iteration 0 (flush() merges into _since_beginning); the repo passes .cpu().data.numpy(), this variant passes the tensors
# Shape: D_cost = D_fake - D_real + gradient_penalty and Wasserstein_D are graph-attached; plot() stores them in a module-level dict whose flush() copies them into _since_beginning forever, so each step's critic graph (incl. the create_graph penalty graph) stays alive
# Expect: TML001 lines 84, 86
import collections

import numpy as np
import torch
from torch import autograd

LAMBDA = 10
CRITIC_ITERS = 5
BATCH_SIZE = 64

# --- minimal tflib.plot -------------------------------------------------------
_since_beginning = collections.defaultdict(dict)
_since_last_flush = collections.defaultdict(dict)
_iter = [0]


def tick():
    _iter[0] += 1


def plot(name, value):
    _since_last_flush[name][_iter[0]] = value


def flush():
    for name, vals in _since_last_flush.items():
        print(name, np.mean([float(v) for v in vals.values()]))
        _since_beginning[name].update(vals)
    _since_last_flush.clear()
# -----------------------------------------------------------------------------


def calc_gradient_penalty(netD, real_data, fake_data, device):
    alpha = torch.rand(BATCH_SIZE, 1, 1, 1, device=device)
    interpolates = (alpha * real_data + (1 - alpha) * fake_data).requires_grad_(True)
    disc_interpolates = netD(interpolates)
    gradients = autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                              grad_outputs=torch.ones_like(disc_interpolates),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]
    gradients = gradients.view(gradients.size(0), -1)
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean() * LAMBDA


def train(netG, netD, optimizerD, optimizerG, data_iter, iters, device):
    one = torch.tensor(1.0, device=device)
    mone = one * -1
    for iteration in range(iters):
        for p in netD.parameters():
            p.requires_grad = True
        for _ in range(CRITIC_ITERS):
            real_data = next(data_iter).to(device)
            netD.zero_grad()

            D_real = netD(real_data).mean()
            D_real.backward(mone)

            noise = torch.randn(BATCH_SIZE, 128, device=device)
            with torch.no_grad():
                fake = netG(noise)
            D_fake = netD(fake).mean()
            D_fake.backward(one)

            gradient_penalty = calc_gradient_penalty(netD, real_data, fake, device)
            gradient_penalty.backward()

            D_cost = D_fake - D_real + gradient_penalty
            Wasserstein_D = D_real - D_fake
            optimizerD.step()

        for p in netD.parameters():
            p.requires_grad = False
        netG.zero_grad()
        noise = torch.randn(BATCH_SIZE, 128, device=device)
        G = netD(netG(noise)).mean()
        G.backward(mone)
        G_cost = -G
        optimizerG.step()

        # tensors are handed to the plot helper as-is ("it calls float() later anyway")
        plot('train disc cost', D_cost)  # expect: TML001
        plot('train gen cost', G_cost.item())
        plot('wasserstein distance', Wasserstein_D)  # expect: TML001

        if (iteration < 5) or (iteration % 100 == 99):
            flush()
        tick()
