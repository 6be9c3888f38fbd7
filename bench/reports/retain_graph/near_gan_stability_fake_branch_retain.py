# Source: https://github.com/LMescheder/GAN_stability/blob/HEAD/gan_training/train.py
# Report: audit of the GAN_stability Trainer: discriminator_trainstep calls dloss_real.backward(retain_graph=True) only so the R1 gradient penalty can differentiate through the same D forward, and the penalty's reg.backward() (no retain) frees it; the fake branch does the same, and only .item() floats leave the step
# Shape: same Trainer with per-network trainstep methods; each retain_graph=True backward is followed in the same branch by a plain backward over the same graph, and the history on self gets dloss.item()
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from torch import autograd


def toggle_grad(model, flag):
    for p in model.parameters():
        p.requires_grad_(flag)


def grad_norm2(d_out, x_in):
    grad, = autograd.grad(outputs=d_out.sum(), inputs=x_in,
                          create_graph=True, retain_graph=True)
    return grad.pow(2).reshape(x_in.size(0), -1).sum(1)


class Trainer:
    def __init__(self, generator, discriminator, g_opt, d_opt, reg_type="real", reg_param=10.0):
        self.generator, self.discriminator = generator, discriminator
        self.g_opt, self.d_opt = g_opt, d_opt
        self.reg_type, self.reg_param = reg_type, reg_param
        self.d_history = []

    def gan_loss(self, d_out, target):
        return F.binary_cross_entropy_with_logits(d_out, torch.full_like(d_out, target))

    def generator_trainstep(self, y, z):
        toggle_grad(self.generator, True)
        toggle_grad(self.discriminator, False)
        self.g_opt.zero_grad()
        gloss = self.gan_loss(self.discriminator(self.generator(z, y), y), 1.0)
        gloss.backward()
        self.g_opt.step()
        return gloss.item()

    def discriminator_trainstep(self, x_real, y, z):
        toggle_grad(self.generator, False)
        toggle_grad(self.discriminator, True)
        self.d_opt.zero_grad()
        reg = torch.zeros((), device=x_real.device)

        x_real.requires_grad_()
        d_real = self.discriminator(x_real, y)
        dloss_real = self.gan_loss(d_real, 1.0)
        if self.reg_type == "real":
            dloss_real.backward(retain_graph=True)
            reg = self.reg_param * grad_norm2(d_real, x_real).mean()
            reg.backward()
        else:
            dloss_real.backward()

        with torch.no_grad():
            x_fake = self.generator(z, y)
        x_fake.requires_grad_()
        d_fake = self.discriminator(x_fake, y)
        dloss_fake = self.gan_loss(d_fake, 0.0)
        if self.reg_type == "fake":
            dloss_fake.backward(retain_graph=True)
            reg = self.reg_param * grad_norm2(d_fake, x_fake).mean()
            reg.backward()
        else:
            dloss_fake.backward()
        self.d_opt.step()
        toggle_grad(self.discriminator, False)

        dloss = dloss_real + dloss_fake
        self.d_history.append(dloss.item())
        return reg.item()


def train(trainer, loader, zdist, device="cuda", epochs=50):
    for epoch in range(epochs):
        for x_real, y in loader:
            x_real, y = x_real.to(device), y.to(device)
            z = zdist.sample((x_real.size(0),)).to(device)
            reg = trainer.discriminator_trainstep(x_real, y, z)
            gloss = trainer.generator_trainstep(y, z)
        print(f"epoch {epoch}: g={gloss:.3f} reg={reg:.3f} d_steps={len(trainer.d_history)}")
