# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/8457
# Report: a GAN LightningModule ran out of GPU memory during training; the maintainer pointed at a self.logging_dict of per-step loss lists that kept the loss tensors on the GPU
# Shape: training_step appends each generator / discriminator loss tensor (still attached) to lists in self.logging_dict, averaged and cleared only at epoch end
# Expect: TML001 line 41; TML001 line 42; TML001 line 43; TML001 line 50; TML001 line 51
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
            self.logging_dict["g_loss"].append(g_loss)  # expect: TML001
            self.logging_dict["g_adv_loss"].append(g_adv_loss)  # expect: TML001
            self.logging_dict["g_z_loss"].append(g_z_loss)  # expect: TML001
            return g_loss

        real_loss = self.adversarial_loss(self.discriminator(x), True)
        fake_loss = self.adversarial_loss(self.discriminator(self(z).detach()), False)
        d_adv_loss = 0.5 * (real_loss + fake_loss)
        d_loss = d_adv_loss
        self.logging_dict["d_loss"].append(d_loss)  # expect: TML001
        self.logging_dict["d_adv_loss"].append(d_adv_loss)  # expect: TML001
        return d_loss

    def training_epoch_end(self, outputs):
        for name, values in self.logging_dict.items():
            if values:
                self.log(f"epoch_{name}", torch.stack(values).mean())
            values.clear()

    def configure_optimizers(self):
        opt_g = torch.optim.Adam(self.generator.parameters(), lr=self.lr, betas=(0.5, 0.999))
        opt_d = torch.optim.Adam(self.discriminator.parameters(), lr=self.lr, betas=(0.5, 0.999))
        return [opt_g, opt_d]
