# Source: https://github.com/NVlabs/stylegan2-ada-pytorch/blob/main/training/loss.py
# Report: StyleGAN2-ADA's path-length regulariser keeps a running mean of path lengths on the loss object; the lerp result is used for this step's penalty but only its detached value is copied back into self.pl_mean
# Shape: pl_mean = self.pl_mean.lerp(pl_lengths.mean(), decay) is a local; self.pl_mean.copy_(pl_mean.detach()) stores the value without the create_graph history, so no step links to the previous one
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn.functional as F


class StyleGAN2Loss:
    def __init__(self, device, G_mapping, G_synthesis, D, r1_gamma=10.0,
                 pl_batch_shrink=2, pl_decay=0.01, pl_weight=2.0):
        self.device = device
        self.G_mapping = G_mapping
        self.G_synthesis = G_synthesis
        self.D = D
        self.r1_gamma = r1_gamma
        self.pl_batch_shrink = pl_batch_shrink
        self.pl_decay = pl_decay
        self.pl_weight = pl_weight
        self.pl_mean = torch.zeros([], device=device)

    def run_G(self, z, c):
        ws = self.G_mapping(z, c)
        img = self.G_synthesis(ws)
        return img, ws

    def run_D(self, img, c):
        return self.D(img, c)

    def accumulate_gradients(self, phase, real_img, real_c, gen_z, gen_c, gain):
        do_Gmain = phase in ("Gmain", "Gboth")
        do_Gpl = phase in ("Greg", "Gboth") and self.pl_weight != 0
        do_Dmain = phase in ("Dmain", "Dboth")
        do_Dr1 = phase in ("Dreg", "Dboth") and self.r1_gamma != 0

        if do_Gmain:
            gen_img, _ = self.run_G(gen_z, gen_c)
            loss_Gmain = F.softplus(-self.run_D(gen_img, gen_c))
            loss_Gmain.mean().mul(gain).backward()

        if do_Gpl:
            n = gen_z.shape[0] // self.pl_batch_shrink
            gen_img, gen_ws = self.run_G(gen_z[:n], gen_c[:n])
            pl_noise = torch.randn_like(gen_img) / np.sqrt(gen_img.shape[2] * gen_img.shape[3])
            pl_grads = torch.autograd.grad(outputs=[(gen_img * pl_noise).sum()], inputs=[gen_ws],
                                           create_graph=True, only_inputs=True)[0]
            pl_lengths = pl_grads.square().sum(2).mean(1).sqrt()
            pl_mean = self.pl_mean.lerp(pl_lengths.mean(), self.pl_decay)
            self.pl_mean.copy_(pl_mean.detach())
            pl_penalty = (pl_lengths - pl_mean).square()
            loss_Gpl = pl_penalty * self.pl_weight
            (gen_img[:, 0, 0, 0] * 0 + loss_Gpl).mean().mul(gain).backward()

        if do_Dmain:
            gen_img, _ = self.run_G(gen_z, gen_c)
            loss_Dgen = F.softplus(self.run_D(gen_img.detach(), gen_c))
            loss_Dgen.mean().mul(gain).backward()

        if do_Dmain or do_Dr1:
            real_tmp = real_img.detach().requires_grad_(do_Dr1)
            real_logits = self.run_D(real_tmp, real_c)
            loss_Dreal = F.softplus(-real_logits) if do_Dmain else 0
            loss_Dr1 = 0
            if do_Dr1:
                r1_grads = torch.autograd.grad(outputs=[real_logits.sum()], inputs=[real_tmp],
                                               create_graph=True, only_inputs=True)[0]
                loss_Dr1 = r1_grads.square().sum([1, 2, 3]) * (self.r1_gamma / 2)
            (real_logits * 0 + loss_Dreal + loss_Dr1).mean().mul(gain).backward()


def training_loop(loss, G_opt, D_opt, loader, z_dim, device, G_reg_interval=4, D_reg_interval=16):
    phases = [("G", G_opt, "Gmain", 1), ("G", G_opt, "Greg", G_reg_interval),
              ("D", D_opt, "Dmain", 1), ("D", D_opt, "Dreg", D_reg_interval)]
    for step, (real_img, real_c) in enumerate(loader):
        real_img = real_img.to(device).to(torch.float32) / 127.5 - 1
        real_c = real_c.to(device)
        for _, opt, phase, interval in phases:
            if step % interval != 0:
                continue
            gen_z = torch.randn([real_img.shape[0], z_dim], device=device)
            opt.zero_grad(set_to_none=True)
            loss.accumulate_gradients(phase, real_img, real_c, gen_z, real_c, gain=interval)
            opt.step()
