# Source: https://github.com/1austrartsua1/distributedGAN/blob/19e22f7233c99e5ed7b9d2abd8c59862c95eb571/algorithms/gda.py
# Report: later revision of the same distributed GAN loop: errG is rebound to av_loss(errG, 1.0), an all-reduced Python float, before it reaches ProgressMeter.record, which appends errD/errG to self.G_losses / self.D_losses for pickling
# Shape: the loss still travels into a persistent meter's list, but only after the same-module helper av_loss turned it into float(...)
# Expect: near-miss: must be silent
import time

import torch
import torch.distributed as dist
import torch.optim as optim


def av_grad(model, world_size):
    for name, param in model.named_parameters():
        if param.grad is not None:
            dist.all_reduce(param.grad.data, op=dist.ReduceOp.SUM)
            param.grad.data /= world_size


def av_loss(total_loss, n_samples):
    reduction = torch.FloatTensor([total_loss, n_samples]).cuda()
    dist.all_reduce(reduction, op=dist.ReduceOp.SUM)
    return float(reduction[0].item() / reduction[1].item())


class ProgressMeter:
    def __init__(self, results):
        self.results = results
        self.forwardStepStamps = []
        self.epochStamps = []
        self.G_losses = []
        self.D_losses = []
        self.t0 = time.time()

    def record(self, forward_steps, epoch, errD, errG):
        self.forwardStepStamps.append(forward_steps)
        self.epochStamps.append(epoch)
        self.t0 = time.time()
        self.G_losses.append(errG)
        self.D_losses.append(errD)


def main_worker(global_rank, world_size, netG, netD, dataloader, nz, compute_gan_loss,
                results, num_epochs=1, eval_freq=100):
    optimizerD = optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.9))
    optimizerG = optim.Adam(netG.parameters(), lr=2e-5, betas=(0.5, 0.9))
    progressMeter = ProgressMeter(results)
    iterations = 0
    for epoch in range(num_epochs):
        for i, data in enumerate(dataloader, 0):
            netD.zero_grad()
            real_cpu = data[0].cuda(non_blocking=True)
            b_size = real_cpu.size(0)
            output = netD(real_cpu).view(-1)
            errD_real = compute_gan_loss(output, "BCE", b_size, "real", "dis")
            errD_real.backward()
            D_on_real_data = av_loss(output.sum(), b_size)

            fake = netG(torch.randn(b_size, nz).cuda())
            output = netD(fake.detach()).view(-1)
            errD_fake = compute_gan_loss(output, "BCE", b_size, "fake", "dis")
            errD_fake.backward()
            errD = errD_real + errD_fake
            errD = av_loss(errD, 1.0)
            av_grad(netD, world_size)
            optimizerD.step()

            netG.zero_grad()
            output = netD(fake).view(-1)
            errG = compute_gan_loss(output, "BCE", b_size, "real", "gen")
            errG.backward()
            errG = av_loss(errG, 1.0)
            av_grad(netG, world_size)
            optimizerG.step()
            iterations += 1

            if global_rank == 0 and iterations % eval_freq == 0:
                progressMeter.record(iterations, epoch, errD, errG)
        if global_rank == 0:
            print('[%d/%d]\tLoss_D: %.4f\tLoss_G: %.4f\tD(x): %.4f'
                  % (epoch, num_epochs, errD, errG, D_on_real_data))
    return progressMeter
