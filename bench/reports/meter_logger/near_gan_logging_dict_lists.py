# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/8457
# Report: a GAN LightningModule ran out of GPU memory during training; the maintainer pointed at a self.logging_dict of per-step loss lists that kept the loss tensors on the GPU
# Shape: same module, but each loss is stored as a Python float with .item(), and the epoch means are computed from the floats
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
import pytorch_lightning as pl


class LatentGAN(pl.LightningModule):
    def __init__(self, generator, discriminator, encoder, latent_dim=64, lr=2e-4, reg_weight=1e-3):
        super().__init__()
        self.generator = generator
        self.discriminator = discriminator
        self.encoder = encoder
        self.latent_dim = latent_dim
        self.lr = lr
        self.reg_weight = reg_weight
        self.logging_dict = {"g_loss": [], "g_adv_loss": [], "g_z_loss": [],
                             "d_loss": [], "d_adv_loss": []}

    def forward(self, z):
        return self.generator(z)

    def adversarial_loss(self, logits, is_real):
        target = torch.ones_like(logits) if is_real else torch.zeros_like(logits)
        return F.binary_cross_entropy_with_logits(logits, target)

    def regularization(self):
        return sum(p.pow(2).sum() for p in self.generator.parameters())

    def training_step(self, batch, batch_idx, optimizer_idx):
        x, _ = batch
        z = torch.randn(x.size(0), self.latent_dim, device=self.device)

        if optimizer_idx == 0:
            fake = self(z)
            g_adv_loss = self.adversarial_loss(self.discriminator(fake), True)
            g_z_loss = F.mse_loss(self.encoder(fake), z)
            g_loss = g_adv_loss + g_z_loss + self.reg_weight * self.regularization()
            self.logging_dict["g_loss"].append(g_loss.item())
            self.logging_dict["g_adv_loss"].append(g_adv_loss.item())
            self.logging_dict["g_z_loss"].append(g_z_loss.item())
            return g_loss

        real_loss = self.adversarial_loss(self.discriminator(x), True)
        fake_loss = self.adversarial_loss(self.discriminator(self(z).detach()), False)
        d_adv_loss = 0.5 * (real_loss + fake_loss)
        d_loss = d_adv_loss
        self.logging_dict["d_loss"].append(d_loss.item())
        self.logging_dict["d_adv_loss"].append(d_adv_loss.item())
        return d_loss

    def training_epoch_end(self, outputs):
        for name, values in self.logging_dict.items():
            if values:
                self.log(f"epoch_{name}", sum(values) / len(values))
            values.clear()

    def configure_optimizers(self):
        opt_g = torch.optim.Adam(self.generator.parameters(), lr=self.lr, betas=(0.5, 0.999))
        opt_d = torch.optim.Adam(self.discriminator.parameters(), lr=self.lr, betas=(0.5, 0.999))
        return [opt_g, opt_d]
