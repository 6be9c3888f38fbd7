# Source: https://github.com/junyanz/pytorch-CycleGAN-and-pix2pix/pull/141
# Report: CycleGAN training ran out of GPU memory after a few iterations; the history ImagePool was fed the generator's output Variable, fixed by feeding it the plain tensor
# Shape: fixed version: backward_D_A hands the pool fake_B.detach(), so query() only ever keeps plain image tensors
# Expect: near-miss: must be silent
import random

import torch


class ImagePool:
    def __init__(self, pool_size=50):
        self.pool_size = pool_size
        self.num_imgs = 0
        self.images = []

    def query(self, images):
        returned = []
        for image in images:
            image = image.unsqueeze(0)
            if self.num_imgs < self.pool_size:
                self.num_imgs += 1
                self.images.append(image)
                returned.append(image)
            elif random.uniform(0, 1) > 0.5:
                idx = random.randint(0, self.pool_size - 1)
                old = self.images[idx].clone()
                self.images[idx] = image
                returned.append(old)
            else:
                returned.append(image)
        return torch.cat(returned, 0)


class CycleGANModel:
    def __init__(self, netG_A, netD_A, criterionGAN, optimizer_D, pool_size=50):
        self.netG_A, self.netD_A = netG_A, netD_A
        self.criterionGAN = criterionGAN
        self.optimizer_D = optimizer_D
        self.fake_B_pool = ImagePool(pool_size)

    def set_input(self, batch, device):
        self.real_A = batch["A"].to(device)
        self.real_B = batch["B"].to(device)

    def backward_D_A(self):
        fake_B = self.fake_B_pool.query(self.fake_B.detach())
        pred_real = self.netD_A(self.real_B)
        pred_fake = self.netD_A(fake_B)
        loss_D_A = 0.5 * (self.criterionGAN(pred_real, True)
                          + self.criterionGAN(pred_fake, False))
        loss_D_A.backward()
        self.loss_D_A = loss_D_A.item()

    def optimize_parameters(self):
        self.fake_B = self.netG_A(self.real_A)
        self.optimizer_D.zero_grad()
        self.backward_D_A()
        self.optimizer_D.step()

    def get_current_errors(self):
        return {"D_A": self.loss_D_A}


def train(model, loader, device, epochs=200, print_freq=100):
    for epoch in range(epochs):
        for i, batch in enumerate(loader):
            model.set_input(batch, device)
            model.optimize_parameters()
            if i % print_freq == 0:
                print(epoch, i, model.get_current_errors())
