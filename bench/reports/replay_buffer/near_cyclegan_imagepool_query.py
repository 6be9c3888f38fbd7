# Source: https://github.com/SadMemories/CycleGAN_pytorch/blob/219cdb5b5c0ecb5ebebc10569e7e83b1a2a6de2b/cycleGAN.py
# Report: the same CycleGAN with ImagePool.query fixed the way the reference implementation does it (each image is detached before it is pooled)
# Shape: backward_D_A/B still pass the attached fake_B/fake_A to query(), but query() detaches each image before appending it to self.images, so the pool holds plain tensors and no generator graph outlives the step
# Expect: near-miss: must be silent
import itertools
import random

import torch
import torch.nn as nn


class ImagePool:
    def __init__(self, pool_size):
        self.pool_size = pool_size
        if self.pool_size > 0:
            self.images = []
            self.cur_cnt = 0

    def query(self, images):
        if self.pool_size == 0:
            return images
        ret_images = []
        for image in images:
            image = image.detach()
            if self.cur_cnt < self.pool_size:
                ret_images.append(image)
                self.images.append(image)
                self.cur_cnt += 1
            else:
                if random.uniform(0.0, 1.0) > 0.5:
                    index = random.randint(0, self.pool_size - 1)
                    cur_img = self.images[index].clone()
                    self.images[index] = image
                    ret_images.append(cur_img)
                else:
                    ret_images.append(image)
        return torch.stack(ret_images, 0)


def make_generator(c=3, ngf=64):
    return nn.Sequential(nn.Conv2d(c, ngf, 7, padding=3), nn.InstanceNorm2d(ngf), nn.ReLU(True),
                         nn.Conv2d(ngf, c, 7, padding=3), nn.Tanh())


def make_discriminator(c=3, ndf=64):
    return nn.Sequential(nn.Conv2d(c, ndf, 4, 2, 1), nn.LeakyReLU(0.2, True), nn.Conv2d(ndf, 1, 4, 1, 1))


class CycleGAN:
    def __init__(self, opt):
        self.device = torch.device("cuda:0")
        self.netG_A, self.netG_B = make_generator().to(self.device), make_generator().to(self.device)
        self.netD_A, self.netD_B = make_discriminator().to(self.device), make_discriminator().to(self.device)
        self.criterionGAN = nn.MSELoss()
        self.criterionCycle = nn.L1Loss()
        self.lambda_A, self.lambda_B = opt.lambda_A, opt.lambda_B
        self.fake_A_pool = ImagePool(opt.pool_size)
        self.fake_B_pool = ImagePool(opt.pool_size)
        self.optimizer_G = torch.optim.Adam(itertools.chain(self.netG_A.parameters(), self.netG_B.parameters()),
                                            lr=opt.lr, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(itertools.chain(self.netD_A.parameters(), self.netD_B.parameters()),
                                            lr=opt.lr, betas=(0.5, 0.999))

    def set_input(self, inp):
        self.real_A = inp["A"].to(self.device)
        self.real_B = inp["B"].to(self.device)

    def forward(self):
        self.fake_B = self.netG_A(self.real_A)
        self.rec_A = self.netG_B(self.fake_B)
        self.fake_A = self.netG_B(self.real_B)
        self.rec_B = self.netG_A(self.fake_A)

    def backward_G(self):
        d_a, d_b = self.netD_A(self.fake_B), self.netD_B(self.fake_A)
        self.loss_G_A = self.criterionGAN(d_a, torch.ones_like(d_a))
        self.loss_G_B = self.criterionGAN(d_b, torch.ones_like(d_b))
        self.loss_cycle_A = self.criterionCycle(self.real_A, self.rec_A) * self.lambda_A
        self.loss_cycle_B = self.criterionCycle(self.real_B, self.rec_B) * self.lambda_B
        loss_g = self.loss_G_A + self.loss_G_B + self.loss_cycle_A + self.loss_cycle_B
        loss_g.backward()

    def backward_D_basic(self, D, fake_imgs, real_img):
        pred_true = D(real_img)
        loss_true = self.criterionGAN(pred_true, torch.ones_like(pred_true))
        pred_fake = D(fake_imgs.detach())
        loss_false = self.criterionGAN(pred_fake, torch.zeros_like(pred_fake))
        loss_d = (loss_false + loss_true) * 0.5
        loss_d.backward()
        return loss_d

    def backward_D_A(self):
        fake_b_pool = self.fake_B_pool.query(self.fake_B)
        self.loss_D_A = self.backward_D_basic(self.netD_A, fake_b_pool, self.real_B)

    def backward_D_B(self):
        fake_a_pool = self.fake_A_pool.query(self.fake_A)
        self.loss_D_B = self.backward_D_basic(self.netD_B, fake_a_pool, self.real_A)

    def optimize_parameters(self):
        self.forward()
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()
        self.optimizer_D.zero_grad()
        self.backward_D_A()
        self.backward_D_B()
        self.optimizer_D.step()

    def get_current_losses(self):
        return {name: float(getattr(self, "loss_" + name)) for name in ("D_A", "G_A", "cycle_A", "D_B", "G_B", "cycle_B")}


def train(opt, loader):
    model = CycleGAN(opt)
    for epoch in range(opt.n_epoch):
        for i, data in enumerate(loader):
            model.set_input(data)
            model.optimize_parameters()
            if i % opt.print_freq == 0:
                print(epoch, i, model.get_current_losses())
