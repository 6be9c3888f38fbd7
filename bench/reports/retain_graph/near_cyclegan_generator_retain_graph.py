# Source: https://github.com/kshitij-shekhar/image-to-image-translation-IITM-internship/blob/3f02cc297f64824189fafada2d5548b862fa63cc/PyTorch_CycleGAN_pix2pix/models/cycle_gan_model_.py
# Report: audit of a CycleGAN model (pix2pix/CycleGAN layout, every loss and generated image kept on self): backward_G ends in a plain backward(), and the discriminators get the pooled fakes detached, so the generator graph is freed by that backward even though self.loss_G / self.fake_B still reference its outputs
# Shape: same BaseModel-style class and per-batch optimize_parameters() with losses and images on self; backward_G calls self.loss_G.backward() without retain_graph; losses are logged as floats
# Expect: near-miss: must be silent
import itertools
import random
import torch
import torch.nn as nn


class FakePool:
    def __init__(self, size=50):
        self.size, self.images = size, []

    def query(self, fake):
        fake = fake.detach()
        if len(self.images) < self.size:
            self.images.append(fake)
            return fake
        if random.random() < 0.5:
            idx = random.randrange(self.size)
            self.images[idx], fake = fake, self.images[idx]
        return fake


class CycleGANModel:
    loss_names = ["G_A", "G_B", "cycle_A", "cycle_B", "D_A", "D_B"]

    def __init__(self, net_g_a, net_g_b, net_d_a, net_d_b, lr=2e-4, lambda_a=10.0, lambda_b=10.0, device="cuda"):
        self.device = device
        self.netG_A, self.netG_B = net_g_a.to(device), net_g_b.to(device)
        self.netD_A, self.netD_B = net_d_a.to(device), net_d_b.to(device)
        self.lambda_a, self.lambda_b = lambda_a, lambda_b
        self.criterionGAN, self.criterionCycle = nn.MSELoss(), nn.L1Loss()
        self.fake_A_pool, self.fake_B_pool = FakePool(), FakePool()
        self.optimizer_G = torch.optim.Adam(itertools.chain(self.netG_A.parameters(), self.netG_B.parameters()), lr=lr, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(itertools.chain(self.netD_A.parameters(), self.netD_B.parameters()), lr=lr, betas=(0.5, 0.999))

    def set_input(self, batch):
        self.real_A = batch["A"].to(self.device)
        self.real_B = batch["B"].to(self.device)

    def forward(self):
        self.fake_B = self.netG_A(self.real_A)
        self.rec_A = self.netG_B(self.fake_B)
        self.fake_A = self.netG_B(self.real_B)
        self.rec_B = self.netG_A(self.fake_A)

    def gan_loss(self, pred, is_real):
        return self.criterionGAN(pred, torch.full_like(pred, 1.0 if is_real else 0.0))

    def backward_D_basic(self, net_d, real, fake):
        loss_d = 0.5 * (self.gan_loss(net_d(real), True) + self.gan_loss(net_d(fake.detach()), False))
        loss_d.backward()
        return loss_d

    def backward_G(self):
        self.loss_G_A = self.gan_loss(self.netD_A(self.fake_B), True)
        self.loss_G_B = self.gan_loss(self.netD_B(self.fake_A), True)
        self.loss_cycle_A = self.criterionCycle(self.rec_A, self.real_A) * self.lambda_a
        self.loss_cycle_B = self.criterionCycle(self.rec_B, self.real_B) * self.lambda_b
        self.loss_G = self.loss_G_A + self.loss_G_B + self.loss_cycle_A + self.loss_cycle_B
        self.loss_G.backward()

    def optimize_parameters(self):
        self.forward()
        for p in itertools.chain(self.netD_A.parameters(), self.netD_B.parameters()):
            p.requires_grad_(False)
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()
        for p in itertools.chain(self.netD_A.parameters(), self.netD_B.parameters()):
            p.requires_grad_(True)
        self.optimizer_D.zero_grad()
        self.loss_D_A = self.backward_D_basic(self.netD_A, self.real_B, self.fake_B_pool.query(self.fake_B))
        self.loss_D_B = self.backward_D_basic(self.netD_B, self.real_A, self.fake_A_pool.query(self.fake_A))
        self.optimizer_D.step()

    def get_current_losses(self):
        return {name: float(getattr(self, "loss_" + name)) for name in self.loss_names}


def train(model, loader, epochs=200, print_freq=100):
    for epoch in range(epochs):
        for i, batch in enumerate(loader):
            model.set_input(batch)
            model.optimize_parameters()
            if i % print_freq == 0:
                losses = model.get_current_losses()
                print(f"epoch {epoch} iter {i} " + " ".join(f"{k}={v:.3f}" for k, v in losses.items()))
