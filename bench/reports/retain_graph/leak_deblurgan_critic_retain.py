# Source: https://github.com/KupynOrest/DeblurGAN/blob/6d3f1e105e7636d362fc1d29a9f5d14898709d3f/models/conditional_gan_model.py
# Report: DeblurGAN's PR #91 fixed "Trying to backward through the graph a second time" by calling self.loss_D.backward(retain_graph=True) in backward_D; the critic runs criticUpdates times on one generator forward, then backward_G runs the generator loss with a plain backward() (source note: retain_graph added by https://github.com/KupynOrest/DeblurGAN/pull/91)
# Shape: variant with the leak: the generator's final backward of each optimize_parameters step also passes retain_graph=True, so the whole G+D graph of the step stays alive on self.loss_G / self.fake_B into the next step
# Expect: TML006 line 39
from collections import OrderedDict

import torch
import torch.nn as nn


class ConditionalGAN:
    def __init__(self, opt, netG, netD, disc_loss, content_loss):
        self.opt = opt
        self.netG = netG.cuda()
        self.netD = netD.cuda()
        self.discLoss = disc_loss
        self.contentLoss = content_loss
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))
        self.criticUpdates = 5 if opt.gan_type == "wgan-gp" else 1

    def set_input(self, batch):
        self.input_A = batch["A"].cuda(non_blocking=True)
        self.input_B = batch["B"].cuda(non_blocking=True)

    def forward(self):
        self.real_A = self.input_A
        self.fake_B = self.netG(self.real_A)
        self.real_B = self.input_B

    def backward_D(self):
        self.loss_D = self.discLoss.get_loss(self.netD, self.real_A, self.fake_B, self.real_B)
        self.loss_D.backward(retain_graph=True)

    def backward_G(self):
        self.loss_G_GAN = self.discLoss.get_g_loss(self.netD, self.real_A, self.fake_B)
        self.loss_G_Content = self.contentLoss.get_loss(self.fake_B, self.real_B) * self.opt.lambda_A
        self.loss_G = self.loss_G_GAN + self.loss_G_Content
        self.loss_G.backward(retain_graph=True)  # expect: TML006

    def optimize_parameters(self):
        self.forward()
        for _ in range(self.criticUpdates):
            self.optimizer_D.zero_grad()
            self.backward_D()
            self.optimizer_D.step()
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()

    def get_current_errors(self):
        return OrderedDict([("G_GAN", self.loss_G_GAN.item()),
                            ("G_L1", self.loss_G_Content.item()),
                            ("D_real+fake", self.loss_D.item())])


def train(opt, data_loader, model, visualizer):
    total_steps = 0
    for epoch in range(opt.epoch_count, opt.niter + opt.niter_decay + 1):
        for data in data_loader:
            total_steps += opt.batchSize
            model.set_input(data)
            model.optimize_parameters()
            if total_steps % opt.print_freq == 0:
                errors = model.get_current_errors()
                visualizer.print_current_errors(epoch, total_steps, errors)
