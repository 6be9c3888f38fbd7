# Source: https://github.com/junyanz/pytorch-CycleGAN-and-pix2pix/issues/512
# Report: GPU memory of the fake-image history pool was far too high with large images; placing detached images in the pool (the pool is only read by the discriminator) cut the footprint significantly
# Shape: near-miss, the fix the reporter applied: query() detaches each image before it enters the pool, so the buffer keeps only pixels
# Expect: near-miss: must be silent
import random

import torch
import torch.nn.functional as F


class ImagePool:
    """History buffer of generated images (Shrivastava et al.)."""

    def __init__(self, pool_size=50):
        self.pool_size = pool_size
        self.images = []

    def query(self, images):
        out = []
        for image in images:
            image = image.detach().unsqueeze(0)
            if len(self.images) < self.pool_size:
                self.images.append(image)
                out.append(image)
            elif random.random() > 0.5:
                idx = random.randint(0, self.pool_size - 1)
                old = self.images[idx].clone()
                out.append(old)
                # keep the freshest sample, hand back an old one
                self.images[idx] = image
            else:
                out.append(image)
        return torch.cat(out, dim=0)


def train(netG, netD, loader, opt_g, opt_d, n_critic=5, device="cuda"):
    pool = ImagePool(50)
    for step, real in enumerate(loader):
        real = real.to(device)
        z = torch.randn(real.size(0), netG.z_dim, device=device)
        fake = netG(z)
        fake_for_d = pool.query(fake)
        d_loss = F.softplus(netD(fake_for_d.detach())).mean() + F.softplus(-netD(real)).mean()
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        if step % n_critic == 0:
            g_loss = F.softplus(-netD(netG(z))).mean()
            opt_g.zero_grad()
            g_loss.backward()
            opt_g.step()
