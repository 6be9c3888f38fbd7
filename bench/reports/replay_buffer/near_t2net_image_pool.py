# Source: https://github.com/lyndonzheng/Synthetic2Realistic/blob/8ae30ce855e4ebb4be81b1fc7e66c52356b918e9/util/image_pool.py
# Report: fixed variant of the shipped ImagePool: detach each image before it enters the pool, as the CycleGAN ImagePool it copies does with image.data
# Shape: the pool object still lives for the whole run and query() still appends / swaps into self.images, but only detached image tensors
# Expect: near-miss: must be silent

import random

import torch

from . import network
from . import task


class ImagePool():
    def __init__(self, pool_size):
        self.pool_size = pool_size
        if self.pool_size > 0:
            self.num_imgs = 0
            self.images = []

    def query(self, images):
        if self.pool_size == 0:
            return images
        return_images = []
        for image in images:
            image = torch.unsqueeze(image.detach(), 0)
            if self.num_imgs < self.pool_size:
                self.num_imgs += 1
                self.images.append(image)
                return_images.append(image)
            else:
                p = random.uniform(0, 1)
                if p > 0.5:
                    random_id = random.randint(0, self.pool_size - 1)
                    tmp = self.images[random_id].clone()
                    self.images[random_id] = image
                    return_images.append(tmp)
                else:
                    return_images.append(image)
        return torch.cat(return_images, 0)


class T2NetModel:
    def __init__(self, opt, net_s2t, net_img_D, l1loss):
        self.opt = opt
        self.net_s2t = net_s2t
        self.net_img_D = net_img_D
        self.l1loss = l1loss
        self.fake_img_pool = ImagePool(opt.pool_size)

    def backward_D_basic(self, netD, real, fake):
        D_loss = 0
        for (real_i, fake_i) in zip(real, fake):
            D_real = netD(real_i.detach())
            D_fake = netD(fake_i.detach())
            for (D_real_i, D_fake_i) in zip(D_real, D_fake):
                D_loss += (torch.mean((D_real_i - 1.0) ** 2) + torch.mean((D_fake_i - 0.0) ** 2)) * 0.5
        D_loss.backward()
        return D_loss

    def backward_D_image(self):
        network._freeze(self.net_s2t)
        network._unfreeze(self.net_img_D)
        size = len(self.img_s2t)
        fake = []
        for i in range(size):
            fake.append(self.fake_img_pool.query(self.img_s2t[i]))
        real = task.scale_pyramid(self.img_t, size)
        self.loss_img_D = self.backward_D_basic(self.net_img_D, real, fake)

    def backward_synthesis2real(self):
        network._freeze(self.net_img_D)
        network._unfreeze(self.net_s2t)
        fake = self.net_s2t(torch.cat([self.img_s, self.img_t], 0))
        self.img_s2t = [f.chunk(2)[0] for f in fake[1:]]
        img_t2t = [f.chunk(2)[1] for f in fake[1:]]
        img_real = task.scale_pyramid(self.img_t, len(img_t2t))
        G_loss = 0
        rec_loss = 0
        for i in range(len(img_t2t)):
            rec_loss += self.l1loss(img_t2t[i], img_real[i])
            for D_fake_i in self.net_img_D(self.img_s2t[i]):
                G_loss += torch.mean((D_fake_i - 1.0) ** 2)
        total_loss = G_loss * self.opt.lambda_gan_img + rec_loss * self.opt.lambda_rec_img
        total_loss.backward()

    def optimize_parameters(self, batch):
        self.img_s = batch["img_source"].cuda()
        self.img_t = batch["img_target"].cuda()
        self.optimizer_T2Net.zero_grad()
        self.backward_synthesis2real()
        self.optimizer_T2Net.step()
        self.optimizer_D.zero_grad()
        self.backward_D_image()
        self.optimizer_D.step()
