# Source: https://github.com/jessemelpolio/non-stationary_texture_syn/issues/15
# Report: issue asks about style_loss.backward(retain_graph=True) followed by (perceptual_loss+gan_G).backward() in models/half_gan_style.py; the maintainer notes the retained graph stays in memory until the next backward. This version keeps the repository's order
# Shape: backward_G keeps the same self attributes; only the first (style) backward retains the graph and the final loss_G.backward() frees it
# Expect: near-miss: must be silent

from collections import OrderedDict

import torch
import torch.nn as nn

from . import networks
from .base_model import BaseModel
from .image_pool import ImagePool


class GramMatrix(nn.Module):
    def forward(self, x):
        b, c, h, w = x.size()
        feats = x.view(b, c, h * w)
        return torch.bmm(feats, feats.transpose(1, 2)) / (c * h * w)


class HalfGanStyleModel(BaseModel):
    def name(self):
        return "HalfGanStyleModel"

    def initialize(self, opt):
        BaseModel.initialize(self, opt)
        self.netG = networks.define_G(opt.input_nc, opt.output_nc, opt.ngf, opt.which_model_netG, gpu_ids=self.gpu_ids)
        self.netD = networks.define_D(opt.output_nc, opt.ndf, opt.which_model_netD, gpu_ids=self.gpu_ids)
        self.vgg = networks.VGG().cuda()
        self.style_layers = ["r11", "r21", "r31", "r41", "r51"]
        self.loss_layers = self.style_layers
        self.loss_fns = [nn.MSELoss()] * len(self.style_layers)
        self.weights = [1e3 / n ** 2 for n in [64, 128, 256, 512, 512]]
        self.fake_AB_pool = ImagePool(opt.pool_size)
        self.criterionGAN = networks.GANLoss(use_lsgan=not opt.no_lsgan, tensor=self.Tensor)
        self.criterionL1 = nn.L1Loss()
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))

    def forward(self):
        self.real_A = self.input_A
        self.fake_B = self.netG(self.real_A)
        self.real_B = self.input_B

    def backward_D(self):
        fake_AB = self.fake_AB_pool.query(self.fake_B.detach().clone())
        self.pred_fake = self.netD(fake_AB)
        self.loss_D_fake = self.criterionGAN(self.pred_fake, False)
        self.pred_real = self.netD(self.real_B.clone())
        self.loss_D_real = self.criterionGAN(self.pred_real, True)
        self.loss_D = (self.loss_D_fake + self.loss_D_real) * 0.5
        self.loss_D.backward()

    def backward_G(self):
        style_targets = [GramMatrix()(A).detach() for A in self.vgg(self.real_B, self.style_layers)]
        out = self.vgg(self.fake_B, self.loss_layers)
        layer_losses = [self.weights[a] * self.loss_fns[a](GramMatrix()(A), style_targets[a]) for a, A in enumerate(out)]
        self.style_loss = sum(layer_losses)
        self.style_loss.backward(retain_graph=True)
        self.style_loss_value = self.style_loss.item()

        pred_fake = self.netD(self.fake_B.clone())
        self.loss_G_GAN = self.criterionGAN(pred_fake, True)
        self.loss_G_L1 = self.criterionL1(self.fake_B, self.real_B) * self.opt.lambda_A
        self.loss_G = self.loss_G_GAN + self.loss_G_L1
        self.loss_G.backward()

    def optimize_parameters(self):
        self.forward()
        self.optimizer_D.zero_grad()
        self.backward_D()
        self.optimizer_D.step()
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()

    def get_current_errors(self):
        return OrderedDict([("G_GAN", self.loss_G_GAN.item()), ("G_L1", self.loss_G_L1.item()),
                            ("D_real", self.loss_D_real.item()), ("D_fake", self.loss_D_fake.item()),
                            ("Style", self.style_loss_value)])
