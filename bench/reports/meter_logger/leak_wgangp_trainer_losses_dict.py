# Source: https://github.com/EmilienDupont/wgan-gp/blob/50361ca47d260f9585f557b84c136c2e417030d1/training.py
# Report: one edit away from the WGAN-GP Trainer: the upstream .data[0] fails on 0-dim tensors in current PyTorch, and the quick fix that deletes it appends the tensors themselves to self.losses
# Shape: _critic_train_iteration/_generator_train_iteration/_gradient_penalty run once per step and append attached tensors to the lists in the persistent self.losses dict; the gradient-norm record is off the d_loss path, so its saved create_graph gradients are never freed by backward and pile up step after step
# Expect: TML001 lines 36, 43, 53, 67
import imageio
import numpy as np
import torch
from torch.autograd import grad as torch_grad
from torchvision.utils import make_grid


class Trainer:
    def __init__(self, generator, discriminator, gen_optimizer, dis_optimizer,
                 gp_weight=10, critic_iterations=5, print_every=50, use_cuda=True):
        self.G, self.G_opt = generator, gen_optimizer
        self.D, self.D_opt = discriminator, dis_optimizer
        self.losses = {'G': [], 'D': [], 'GP': [], 'gradient_norm': []}
        self.num_steps = 0
        self.use_cuda = use_cuda
        self.gp_weight = gp_weight
        self.critic_iterations = critic_iterations
        self.print_every = print_every
        if self.use_cuda:
            self.G.cuda()
            self.D.cuda()

    def _critic_train_iteration(self, data):
        batch_size = data.size(0)
        generated_data = self.sample_generator(batch_size)
        if self.use_cuda:
            data = data.cuda()
        d_real = self.D(data)
        d_generated = self.D(generated_data)

        gradient_penalty = self._gradient_penalty(data, generated_data)
        self.losses['GP'].append(gradient_penalty)  # expect: TML001

        self.D_opt.zero_grad()
        d_loss = d_generated.mean() - d_real.mean() + gradient_penalty
        d_loss.backward()
        self.D_opt.step()

        self.losses['D'].append(d_loss)  # expect: TML001

    def _generator_train_iteration(self, data):
        self.G_opt.zero_grad()
        generated_data = self.sample_generator(data.size(0))
        d_generated = self.D(generated_data)
        g_loss = -d_generated.mean()
        g_loss.backward()
        self.G_opt.step()

        self.losses['G'].append(g_loss)  # expect: TML001

    def _gradient_penalty(self, real_data, generated_data):
        batch_size = real_data.size(0)
        alpha = torch.rand(batch_size, 1, 1, 1).expand_as(real_data)
        if self.use_cuda:
            alpha = alpha.cuda()
        interpolated = alpha * real_data.detach() + (1 - alpha) * generated_data.detach()
        interpolated.requires_grad_(True)
        prob_interpolated = self.D(interpolated)
        gradients = torch_grad(outputs=prob_interpolated, inputs=interpolated,
                               grad_outputs=torch.ones_like(prob_interpolated),
                               create_graph=True, retain_graph=True)[0]
        gradients = gradients.view(batch_size, -1)
        self.losses['gradient_norm'].append(gradients.norm(2, dim=1).mean())  # expect: TML001
        gradients_norm = torch.sqrt(torch.sum(gradients ** 2, dim=1) + 1e-12)
        return self.gp_weight * ((gradients_norm - 1) ** 2).mean()

    def _train_epoch(self, data_loader):
        for i, data in enumerate(data_loader):
            self.num_steps += 1
            self._critic_train_iteration(data[0])
            if self.num_steps % self.critic_iterations == 0:
                self._generator_train_iteration(data[0])
            if i % self.print_every == 0:
                print("D: {}  GP: {}  grad norm: {}".format(
                    self.losses['D'][-1], self.losses['GP'][-1], self.losses['gradient_norm'][-1]))

    def train(self, data_loader, epochs):
        fixed_latents = self.G.sample_latent(64).cuda()
        frames = []
        for epoch in range(epochs):
            self._train_epoch(data_loader)
            with torch.no_grad():
                grid = make_grid(self.G(fixed_latents).cpu())
            frames.append(np.transpose(grid.numpy(), (1, 2, 0)))
        imageio.mimsave('./training_{}_epochs.gif'.format(epochs), frames)

    def sample_generator(self, num_samples):
        latent_samples = self.G.sample_latent(num_samples)
        if self.use_cuda:
            latent_samples = latent_samples.cuda()
        return self.G(latent_samples)
