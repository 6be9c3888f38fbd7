# Source: https://github.com/lucidrains/stylegan2-pytorch/blob/master/stylegan2_pytorch/stylegan2_pytorch.py
# Report: one edit from lucidrains' StyleGAN2 trainer: the path-length mean is kept on the GPU (pl_lengths.mean(), to skip the host sync) before being folded into self.pl_mean by the EMA helper
# Shape: avg_pl_length now comes from autograd.grad(create_graph=True) through G; update_average returns old * beta + (1 - beta) * new, so self.pl_mean reads its previous value and stays graph-attached across train() calls
# Expect: TML005 line 84
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch.autograd import grad as torch_grad


def exists(val):
    return val is not None


def is_empty(t):
    if isinstance(t, torch.Tensor):
        return t.nelement() == 0
    return not exists(t)


class EMA:
    def __init__(self, beta):
        self.beta = beta

    def update_average(self, old, new):
        if not exists(old):
            return new
        return old * self.beta + (1 - self.beta) * new


def calc_pl_lengths(styles, images):
    num_pixels = images.shape[2] * images.shape[3]
    pl_noise = torch.randn(images.shape, device=images.device) / math.sqrt(num_pixels)
    outputs = (images * pl_noise).sum()
    pl_grads = torch_grad(outputs=outputs, inputs=styles,
                          grad_outputs=torch.ones(outputs.shape, device=images.device),
                          create_graph=True, retain_graph=True, only_inputs=True)[0]
    return (pl_grads ** 2).sum(dim=2).mean(dim=1).sqrt()


class Trainer:
    def __init__(self, GAN, batch_size, latent_dim, num_layers, gradient_accumulate_every=4, device="cuda"):
        self.GAN = GAN
        self.batch_size = batch_size
        self.latent_dim = latent_dim
        self.num_layers = num_layers
        self.gradient_accumulate_every = gradient_accumulate_every
        self.device = device
        self.pl_mean = None
        self.pl_length_ma = EMA(0.99)
        self.steps = 0
        self.g_loss = 0.0

    def train(self):
        apply_path_penalty = self.steps > 5000 and self.steps % 32 == 0
        total_gen_loss = torch.tensor(0.0, device=self.device)
        avg_pl_length = torch.tensor(float("nan"))
        self.GAN.G_opt.zero_grad()
        for _ in range(self.gradient_accumulate_every):
            noise = torch.randn(self.batch_size, self.latent_dim, device=self.device)
            w_styles = self.GAN.S(noise)[:, None, :].expand(-1, self.num_layers, -1)
            generated_images = self.GAN.G(w_styles)
            loss = F.softplus(-self.GAN.D(generated_images)).mean()
            gen_loss = loss

            if apply_path_penalty:
                pl_lengths = calc_pl_lengths(w_styles, generated_images)
                avg_pl_length = pl_lengths.mean()
                if not is_empty(self.pl_mean):
                    pl_loss = ((pl_lengths - self.pl_mean) ** 2).mean()
                    if not torch.isnan(pl_loss):
                        gen_loss = gen_loss + pl_loss

            gen_loss = gen_loss / self.gradient_accumulate_every
            gen_loss.backward()
            total_gen_loss += loss.detach().item() / self.gradient_accumulate_every

        self.g_loss = float(total_gen_loss)
        self.GAN.G_opt.step()

        if apply_path_penalty and not torch.isnan(avg_pl_length):
            self.pl_mean = self.pl_length_ma.update_average(self.pl_mean, avg_pl_length)  # expect: TML005
        self.steps += 1


def run_training(trainer, num_train_steps):
    for _ in range(num_train_steps):
        trainer.train()
        if trainer.steps % 50 == 0:
            print(trainer.steps, trainer.g_loss, trainer.pl_mean)
