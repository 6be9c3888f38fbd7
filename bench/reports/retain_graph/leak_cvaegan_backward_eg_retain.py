# Source: https://github.com/junyanz/BicycleGAN/blob/db9e18c4fe96a4b10c7404b60c46271210aa9ef5/models/bicycle_gan_model.py
# Report: audit: backward_EG calls self.loss_G.backward(retain_graph=True) so that backward_G_alone can backprop the latent-regression loss through the same graph; with lambda_z = 0 (the cVAE-GAN setting) no second backward comes, and the retained buffers stay pinned by self.loss_G / self.fake_B_* into the next step
# Shape: pix2pix-style model class with losses and fakes stored on self; the cVAE-GAN variant keeps the retain_graph=True of the full model although its backward is now the last one of the step
# Expect: TML006 line 49
import torch
import torch.nn as nn


class CVAEGANModel:
    def __init__(self, netG, netE, netD, nz=8, lambda_l1=10.0, lambda_kl=0.01, lr=2e-4, device="cuda"):
        self.device = torch.device(device)
        self.netG, self.netE, self.netD = netG.to(self.device), netE.to(self.device), netD.to(self.device)
        self.nz, self.lambda_l1, self.lambda_kl = nz, lambda_l1, lambda_kl
        self.criterionGAN = nn.BCEWithLogitsLoss()
        self.criterionL1 = nn.L1Loss()
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=lr, betas=(0.5, 0.999))
        self.optimizer_E = torch.optim.Adam(self.netE.parameters(), lr=lr, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=lr, betas=(0.5, 0.999))

    def set_input(self, batch):
        self.real_A = batch["A"].to(self.device)
        self.real_B = batch["B"].to(self.device)

    def set_requires_grad(self, net, flag):
        for p in net.parameters():
            p.requires_grad = flag

    def forward(self):
        self.mu, self.logvar = self.netE(self.real_B)
        std = self.logvar.mul(0.5).exp()
        self.z_encoded = self.mu + torch.randn_like(std) * std
        self.fake_B_encoded = self.netG(self.real_A, self.z_encoded)

    def gan_loss(self, pred, target_is_real):
        target = torch.ones_like(pred) if target_is_real else torch.zeros_like(pred)
        return self.criterionGAN(pred, target)

    def backward_D(self):
        pred_fake = self.netD(self.fake_B_encoded.detach())
        pred_real = self.netD(self.real_B)
        self.loss_D = self.gan_loss(pred_fake, False) + self.gan_loss(pred_real, True)
        self.loss_D.backward()

    def backward_EG(self):
        self.loss_G_GAN = self.gan_loss(self.netD(self.fake_B_encoded), True)
        self.loss_kl = torch.sum(1 + self.logvar - self.mu.pow(2) - self.logvar.exp()) * (-0.5 * self.lambda_kl)
        self.loss_G_L1 = self.criterionL1(self.fake_B_encoded, self.real_B) * self.lambda_l1
        self.loss_G = self.loss_G_GAN + self.loss_G_L1 + self.loss_kl
        self.loss_G.backward(retain_graph=True)  # expect: TML006

    def update_G_and_E(self):
        self.set_requires_grad(self.netD, False)
        self.optimizer_E.zero_grad()
        self.optimizer_G.zero_grad()
        self.backward_EG()
        self.optimizer_E.step()
        self.optimizer_G.step()

    def update_D(self):
        self.set_requires_grad(self.netD, True)
        self.optimizer_D.zero_grad()
        self.backward_D()
        self.optimizer_D.step()

    def optimize_parameters(self):
        self.forward()
        self.update_G_and_E()
        self.update_D()

    def get_current_losses(self):
        return {k: float(getattr(self, "loss_" + k)) for k in ("G_GAN", "G_L1", "kl", "D")}


def train(model, loader, epochs=60, print_every=100):
    step = 0
    for epoch in range(epochs):
        for batch in loader:
            model.set_input(batch)
            model.optimize_parameters()
            step += 1
            if step % print_every == 0:
                print(epoch, step, model.get_current_losses())
