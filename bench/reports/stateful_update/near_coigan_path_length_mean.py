# Source: https://github.com/MassimilianoBiancucci/COIGAN-controllable-object-inpainting/blob/039050fa9a22ddd77d52553913a2bc25f43900ca/COIGAN/COIGAN/training/losses/loss_manager.py
# Report: audited code as shipped: g_path_regularize (COIGAN common_losses.py) returns path_mean.detach(), so the running mean carries no graph
# Shape: the loss manager still stores the helper's returned mean on self.mean_path_lenght each step, but the value is detached inside the helper
# Expect: near-miss: must be silent

import logging
import math

import torch
import torch.nn as nn
from torch import autograd

LOGGER = logging.getLogger(__name__)


def g_nonsaturating_loss(fake_pred):
    return nn.functional.softplus(-fake_pred).mean()


def g_path_regularize(fake_img, latents, mean_path_length, decay=0.01):
    noise = torch.randn_like(fake_img) / math.sqrt(fake_img.shape[2] * fake_img.shape[3])
    grad, = autograd.grad(outputs=(fake_img * noise).sum(), inputs=latents, create_graph=True)
    path_lengths = torch.sqrt(grad.pow(2).sum(2).mean(1))
    path_mean = mean_path_length + decay * (path_lengths.mean() - mean_path_length)
    path_penalty = (path_lengths - path_mean).pow(2).mean()
    return path_penalty, path_mean.detach(), path_lengths


class CoiganLossManager:

    def __init__(self, generator_losses, generator_reg, generator, discriminator,
                 g_optimizer, d_optimizer, device):
        self.device = device
        self.metrics = {}
        self.generator = generator
        self.discriminator = discriminator
        self.g_opt = g_optimizer
        self.d_opt = d_optimizer
        self.init_generator_losses(**generator_losses)
        self.init_generator_regularizations(**generator_reg)

    def init_generator_losses(self, l1=None, adversarial=None):
        self.loss_l1 = None
        if l1 is not None and l1["weight"] > 0:
            self.loss_l1 = nn.L1Loss(reduction="mean")
            self.loss_l1_weight = l1["weight"]
        self.loss_adversarial = None
        if adversarial is not None and adversarial["weight"] > 0:
            self.loss_adversarial = g_nonsaturating_loss
            self.loss_adversarial_weight = adversarial["weight"]

    def init_generator_regularizations(self, g_reg_every=4, path_lenght=None):
        self.g_reg_every = g_reg_every
        self.g_reg_steps_count = 0
        self.path_reg = None
        if path_lenght is not None and path_lenght["weight"] > 0:
            self.path_reg = g_path_regularize
            self.path_reg_weight = path_lenght["weight"]
            self.path_reg_decay = path_lenght["decay"]
            self.mean_path_lenght = 0

    def generator_loss(self, fake, real, disc_fake_out):
        generator_losses = {}
        if self.loss_l1 is not None:
            generator_losses["g_loss_l1"] = self.loss_l1(fake, real) * self.loss_l1_weight
        if self.loss_adversarial is not None:
            generator_losses["g_loss_adv"] = self.loss_adversarial(disc_fake_out) * self.loss_adversarial_weight

        g_loss = sum(generator_losses.values())
        self.generator.zero_grad()
        g_loss.backward()
        self.g_opt.step()
        self.metrics.update({k: v.item() for k, v in generator_losses.items()})

    def generator_regularization(self, gen_in):
        g_regs = {}
        if self.g_reg_steps_count % self.g_reg_every == 0 and self.path_reg:
            gen_in.requires_grad = True
            gen_out = self.generator(gen_in)

            path_loss, self.mean_path_lenght, path_lenghts = self.path_reg(gen_out, gen_in, self.mean_path_lenght, self.path_reg_decay)
            g_regs["g_path_loss"] = path_loss * self.path_reg_weight * self.g_reg_every + (0 * gen_out[0, 0, 0, 0])

            self.generator.zero_grad()
            g_regs["g_path_loss"].backward()
            self.g_opt.step()

            LOGGER.debug("path length %.4f", path_lenghts.mean().item())

        self.g_reg_steps_count += 1
        self.metrics.update({k: v.item() for k, v in g_regs.items()})


def train_loop(loss_manager, loader, latent_dim, device):
    for real in loader:
        real = real.to(device)
        gen_in = torch.randn(real.size(0), latent_dim, device=device)
        fake = loss_manager.generator(gen_in)
        disc_fake_out = loss_manager.discriminator(fake)
        loss_manager.generator_loss(fake, real, disc_fake_out)
        loss_manager.generator_regularization(torch.randn_like(gen_in))
