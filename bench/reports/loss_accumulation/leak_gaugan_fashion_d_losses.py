# Source: https://github.com/KirillDemochkin/NeuralFashionGAN/blob/024ea45ffc06091775e069324e97961a6bfeed1c/run_train_test.py
# Report: audited GauGAN/SPADE training loop: the generator loss is kept as a float (errG = errG_hinge.item() + ...), but the discriminator loss errD (a sum of hinge-loss tensors) is appended as-is to D_losses every batch for the epoch-average plot
# Shape: errD is built by += over the multiscale discriminator outputs, backpropagated, then appended to D_losses, a list that lives for the whole epoch; each batch leaves one CUDA tensor (and its autograd node) behind
# Expect: TML001 line 64
import time
import numpy as np
import torch

from utils import losses


def train(args, netD, netG, netE, vgg, train_loader, optimizerD, optimizerG, optimizerE, writer, device):
    num_epochs = args.max_epoch
    for epoch in range(num_epochs):
        start = time.time()
        G_losses = []
        D_losses = []
        for i, data in enumerate(train_loader, 0):
            global_i = len(train_loader) * epoch + i
            # ---- discriminator ----
            optimizerD.zero_grad()
            real_image, mask = data[0].to(device), data[1].to(device)
            real_preds, real_feats = netD(real_image, mask)
            latent_code, mu, sigma = netE(real_image)
            fake = netG(latent_code, mask)
            fake_preds, _ = netD(fake.detach(), mask)
            errD = 0.0
            for fp, rp in zip(fake_preds, real_preds):
                errD += losses.hinge_loss_discriminator(fp, rp)
            errD.backward()
            optimizerD.step()
            if writer is not None:
                writer.add_scalar("loss_D", errD.item(), global_i)

            # ---- generator / encoder ----
            optimizerG.zero_grad()
            optimizerE.zero_grad()
            dkl = losses.KL_divergence(mu, sigma) * args.kl_lambda
            dkl.backward(retain_graph=True)
            errG_p = 0.0
            for ff, rf in zip(vgg(fake), vgg(real_image)):
                errG_p += losses.perceptual_loss(ff, rf.detach(), args.fm_lambda)
            errG_p.backward(retain_graph=True)
            fake_preds, fake_feats = netD(fake, mask)
            errG_hinge = 0.0
            for fp in fake_preds:
                errG_hinge += losses.hinge_loss_generator(fp)
            errG_hinge.backward(retain_graph=True)
            errG_fm = 0.0
            for ff, rf in zip(fake_feats, real_feats):
                errG_fm += losses.perceptual_loss(ff, rf.detach(), args.fm_lambda)
            errG_fm.backward()
            errG = errG_hinge.item() + errG_fm.item() + errG_p.item()
            optimizerG.step()
            optimizerE.step()
            if writer is not None:
                writer.add_scalar("loss_G", errG, global_i)

            if i % 500 == 499:
                print("[%d/%d][%d/%d]\tLoss_D: %.4f\tLoss_G: %.4f"
                      % (epoch, num_epochs, i, len(train_loader), errD.item(), errG))

            G_losses.append(errG)
            D_losses.append(errD)  # expect: TML001

        hours, rem = divmod(time.time() - start, 3600)
        minutes, seconds = divmod(rem, 60)
        print("Epoch %d - Elapsed time: %02d:%02d:%05.2f" % (epoch, hours, minutes, seconds))
        if epoch % args.save_frequency == 0:
            torch.save(netG.state_dict(), "NetG_epoch%d.pth" % epoch)
            torch.save(netD.state_dict(), "NetD_epoch%d.pth" % epoch)
            if writer is not None:
                writer.add_scalar("loss_G_epoch", np.sum(G_losses) / len(train_loader), epoch)
                writer.add_scalar("loss_D_epoch", np.sum(D_losses) / len(train_loader), epoch)
