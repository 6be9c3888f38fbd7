# Source: https://github.com/bcmi/Image-Harmonization-Dataset-iHarmony4/blob/dd1a2bf76366c6e88589179f0dcda7502eb40030/DoveNet/models/dovenet_model.py
# Report: audit: DoveNetModel.backward_G() ends with self.loss_G.backward(retain_graph=True), the last backward of optimize_parameters(); loss_G, output and the D/G activations stay on self, so the retained G+D graph lives on between steps
# Shape: fixed: same wrapper, D's backward still retains (the first of the two backwards in the step) but the generator backward, the last one, frees the graph
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class HarmonizationTrainer:
    def __init__(self, netG, netD, opt, device="cuda"):
        self.netG, self.netD, self.opt, self.device = netG, netD, opt, device
        self.criterionGAN = nn.BCEWithLogitsLoss()
        self.criterionL1 = nn.L1Loss()
        self.optimizer_G = torch.optim.Adam(netG.parameters(), lr=opt["lr"], betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(netD.parameters(), lr=opt["lr"], betas=(0.5, 0.999))

    def set_requires_grad(self, net, flag):
        for p in net.parameters():
            p.requires_grad = flag

    def set_input(self, batch):
        self.comp = batch["comp"].to(self.device)
        self.real = batch["real"].to(self.device)
        self.inputs = batch["inputs"].to(self.device)
        self.mask = self.inputs[:, 3:4]

    def forward(self):
        self.output = self.netG(self.inputs)
        self.harmonized = self.output * self.mask + self.comp * (1 - self.mask)

    def gan_loss(self, pred, is_real):
        target = torch.ones_like(pred) if is_real else torch.zeros_like(pred)
        return self.criterionGAN(pred, target)

    def backward_D(self):
        pred_fake, ver_fake = self.netD(self.harmonized.detach(), self.mask)
        pred_real, ver_real = self.netD(self.real, self.mask)
        self.loss_D_fake = self.gan_loss(pred_fake, False) + self.gan_loss(ver_fake, False)
        self.loss_D_real = self.gan_loss(pred_real, True) + self.gan_loss(ver_real, True)
        self.loss_D = self.loss_D_fake + self.loss_D_real
        self.loss_D.backward(retain_graph=True)

    def backward_G(self):
        pred_fake, ver_fake = self.netD(self.harmonized, self.mask)
        self.loss_G_GAN = self.opt["lambda_a"] * self.gan_loss(pred_fake, True) \
            + self.opt["lambda_v"] * self.gan_loss(ver_fake, True)
        self.loss_G_L1 = self.criterionL1(self.output, self.real) * self.opt["lambda_L1"]
        self.loss_G = self.loss_G_GAN + self.loss_G_L1
        self.loss_G.backward()

    def optimize_parameters(self):
        self.forward()
        self.set_requires_grad(self.netD, True)
        self.optimizer_D.zero_grad()
        self.backward_D()
        self.optimizer_D.step()
        self.set_requires_grad(self.netD, False)
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()

    def current_losses(self):
        names = ["loss_G_GAN", "loss_G_L1", "loss_D_real", "loss_D_fake"]
        return {n: float(getattr(self, n)) for n in names}


def train(trainer, loader, epochs, print_freq=100):
    for epoch in range(epochs):
        for i, batch in enumerate(loader):
            trainer.set_input(batch)
            trainer.optimize_parameters()
            if i % print_freq == 0:
                print(epoch, i, trainer.current_losses())
