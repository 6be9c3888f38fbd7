# Source: http://39.103.169.235/p/f1bd4ff84926
# Report: running the periodic sample() of a conditional image-translation GAN ran out of GPU memory even at batch size 2; the stored fake images kept their whole generator graph, fixed by .detach()
# Shape: the post's fix: each generator output is detached (and copied to the CPU) before it goes into the per-domain list
# Expect: near-miss: must be silent
import os

import torch
import torch.nn as nn
from torchvision.utils import save_image


class Solver:
    def __init__(self, G, D, c_dim, sample_dir, device="cuda"):
        self.G = G.to(device)
        self.D = D.to(device)
        self.c_dim = c_dim
        self.sample_dir = sample_dir
        self.device = device

    def make_targets(self, batch_size):
        eye = torch.eye(self.c_dim, device=self.device)
        return [eye[i].expand(batch_size, -1) for i in range(self.c_dim)]

    @staticmethod
    def denorm(x):
        return ((x + 1) / 2).clamp_(0, 1)

    def train_step(self, real_x, real_c, step):
        # ... discriminator / generator updates elided ...
        if step % 1000 == 0:
            self.sample(real_x, step)

    def sample(self, real_x, step):
        real_x = real_x.to(self.device)
        fake_image_list = [real_x.cpu()]
        for target_c in self.make_targets(real_x.size(0)):
            # the generator returns (image, attention); keep only the pixels,
            # detached, so each forward's graph is dropped right away
            fake = self.G(real_x, target_c)[0].detach()
            fake_image_list.append(fake.cpu())
        fake_images = torch.cat(fake_image_list, dim=3)
        path = os.path.join(self.sample_dir, f"{step}_fake.png")
        save_image(self.denorm(fake_images), path, nrow=1, padding=0)
        print(f"saved samples to {path}")


class TinyG(nn.Module):
    def __init__(self, c_dim):
        super().__init__()
        self.body = nn.Conv2d(3 + c_dim, 3, 3, padding=1)

    def forward(self, x, c):
        c_map = c[:, :, None, None].expand(-1, -1, x.size(2), x.size(3))
        y = torch.tanh(self.body(torch.cat([x, c_map], dim=1)))
        return y, torch.sigmoid(y.mean(1, keepdim=True))
