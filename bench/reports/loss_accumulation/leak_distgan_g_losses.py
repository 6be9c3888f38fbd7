# Source: https://github.com/1austrartsua1/distributedGAN/blob/37e0999f7c125d8dcc50b41823b1a9ec6ecfec8a/distGAN.py
# Report: audited bug: the distributed DCGAN loop reduces errD and the D(x) statistics through av_loss (a float), but appends the raw generator loss tensor errG to G_losses every logging step; a later revision (algorithms/gda.py) rebinds errG = av_loss(errG, 1.0) first
# Shape: errG is the criterion output, backward already ran, and the tensor (with its grad_fn chain) is appended to a list that lives for the whole run
# Expect: TML001 line 62
import torch
import torch.distributed as dist
import torch.nn as nn
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


def main_worker(global_rank, world_size, netG, netD, dataloader, nz, num_epochs=5):
    criterion = nn.BCELoss().cuda()
    optimizerD = optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    G_losses = []
    D_losses = []
    for epoch in range(num_epochs):
        for i, data in enumerate(dataloader, 0):
            netD.zero_grad()
            real_cpu = data[0].cuda(non_blocking=True)
            b_size = real_cpu.size(0)
            label = torch.full((b_size,), 1.0, dtype=torch.float).cuda()
            output = netD(real_cpu).view(-1)
            errD_real = criterion(output, label)
            errD_real.backward()
            D_x = av_loss(output.sum(), b_size)

            noise = torch.randn(b_size, nz, 1, 1).cuda()
            fake = netG(noise)
            label.fill_(0.0)
            output = netD(fake.detach()).view(-1)
            errD_fake = criterion(output, label)
            errD_fake.backward()
            errD = av_loss(errD_real + errD_fake, 1.0)
            av_grad(netD, world_size)
            optimizerD.step()

            netG.zero_grad()
            label.fill_(1.0)
            output = netD(fake).view(-1)
            errG = criterion(output, label)
            errG.backward()
            av_grad(netG, world_size)
            optimizerG.step()

            if global_rank == 0 and i % 50 == 0:
                print('[%d/%d][%d/%d]\tLoss_D: %.4f\tLoss_G: %.4f\tD(x): %.4f'
                      % (epoch, num_epochs, i, len(dataloader), errD, errG, D_x))
                G_losses.append(errG)  # expect: TML001
                D_losses.append(errD)
    return G_losses, D_losses
