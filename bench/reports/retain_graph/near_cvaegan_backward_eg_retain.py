# Source: https://github.com/junyanz/BicycleGAN/blob/db9e18c4fe96a4b10c7404b60c46271210aa9ef5/models/bicycle_gan_model.py
# Report: audit: backward_EG calls self.loss_G.backward(retain_graph=True) because backward_G_alone then backprops the latent-regression loss |E(G(A, z_random)) - z_random| through the same generator graph
# Shape: same model class with losses on self; the retaining backward is followed in the same step by a plain backward of loss_z_L1 (second pass does not retain), as in the repository with lambda_z > 0
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class BicycleGANModel:
    def __init__(self, netG, netE, netD, nz=8, lambda_l1=10.0, lambda_kl=0.01, lambda_z=0.5, lr=2e-4, device="cuda"):
        self.device = torch.device(device)
        self.netG, self.netE, self.netD = netG.to(self.device), netE.to(self.device), netD.to(self.device)
        self.nz, self.lambda_l1, self.lambda_kl, self.lambda_z = nz, lambda_l1, lambda_kl, lambda_z
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
        self.z_random = torch.randn(self.real_A.size(0), self.nz, device=self.device)
        self.fake_B_random = self.netG(self.real_A, self.z_random)
        self.mu2, _ = self.netE(self.fake_B_random)

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
        self.loss_G_GAN2 = self.gan_loss(self.netD(self.fake_B_random), True)
        self.loss_kl = torch.sum(1 + self.logvar - self.mu.pow(2) - self.logvar.exp()) * (-0.5 * self.lambda_kl)
        self.loss_G_L1 = self.criterionL1(self.fake_B_encoded, self.real_B) * self.lambda_l1
        self.loss_G = self.loss_G_GAN + self.loss_G_GAN2 + self.loss_G_L1 + self.loss_kl
        self.loss_G.backward(retain_graph=True)

    def backward_G_alone(self):
        self.loss_z_L1 = torch.mean(torch.abs(self.mu2 - self.z_random)) * self.lambda_z
        self.loss_z_L1.backward()

    def update_G_and_E(self):
        self.set_requires_grad(self.netD, False)
        self.optimizer_E.zero_grad()
        self.optimizer_G.zero_grad()
        self.backward_EG()
        self.set_requires_grad(self.netE, False)
        self.backward_G_alone()
        self.set_requires_grad(self.netE, True)
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


def train(model, loader, epochs=60, print_every=100):
    step = 0
    for epoch in range(epochs):
        for batch in loader:
            model.set_input(batch)
            model.optimize_parameters()
            step += 1
            if step % print_every == 0:
                print(epoch, step, float(model.loss_G), float(model.loss_z_L1), float(model.loss_D))
