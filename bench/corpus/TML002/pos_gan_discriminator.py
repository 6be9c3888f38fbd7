# Modelled on: https://github.com/Hsintien-Ng/idinvert_pytorch-reproduced/issues/1
# Report: optimizer_D.zero_grad() was missing before the discriminator's backward step in the training loop.
import torch
import torch.nn as nn


class InversionGANTrainer:
    """Encoder-inversion GAN: the discriminator step forgets to clear its gradients."""

    def __init__(self, generator: nn.Module, discriminator: nn.Module, latent_dim=512, lr=1e-4):
        self.generator = generator
        self.discriminator = discriminator
        self.latent_dim = latent_dim
        self.opt_d = torch.optim.Adam(discriminator.parameters(), lr=lr, betas=(0.0, 0.99))
        self.opt_g = torch.optim.Adam(generator.parameters(), lr=lr, betas=(0.0, 0.99))

    def fit(self, images, iterations):
        for it, batch in zip(range(iterations), images):
            codes = torch.randn(batch.shape[0], self.latent_dim, device=batch.device)
            synth = self.generator(codes)

            hinge_real = torch.relu(1.0 - self.discriminator(batch)).mean()
            hinge_fake = torch.relu(1.0 + self.discriminator(synth.detach())).mean()
            (hinge_real + hinge_fake).backward()
            self.opt_d.step()  # expect: TML002

            self.opt_g.zero_grad()
            adversarial = -self.discriminator(synth).mean()
            adversarial.backward()
            self.opt_g.step()
