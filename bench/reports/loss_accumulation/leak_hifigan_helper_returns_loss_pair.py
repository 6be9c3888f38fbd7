# Source: https://github.com/pytorch/pytorch/issues/144181
# Report: averaging the discriminator and generator losses over HiFiGAN training by adding the loss tensors to float variables consumed gigabytes of memory.
# Shape: one training step is a helper that returns the (discriminator, generator) loss tensors as a tuple; the epoch loop unpacks it and adds both to float sums.
# Expect: TML001 lines 28, 29
import torch
import torch.nn.functional as F


def gan_step(generator, discriminator, opt_g, opt_d, mel, audio):
    fake = generator(mel)
    d_real, d_fake = discriminator(audio), discriminator(fake.detach())
    loss_disc = ((1 - d_real) ** 2).mean() + (d_fake ** 2).mean()
    opt_d.zero_grad()
    loss_disc.backward()
    opt_d.step()

    loss_gen = ((1 - discriminator(fake)) ** 2).mean() + 45 * F.l1_loss(fake, audio)
    opt_g.zero_grad()
    loss_gen.backward()
    opt_g.step()
    return loss_disc, loss_gen


def train_epoch(generator, discriminator, opt_g, opt_d, loader):
    epoch_disc_loss, epoch_gen_loss = 0.0, 0.0
    for mel, audio in loader:
        loss_disc, loss_gen = gan_step(generator, discriminator, opt_g, opt_d, mel.cuda(), audio.cuda())
        epoch_disc_loss += loss_disc  # expect: TML001
        epoch_gen_loss += loss_gen  # expect: TML001
    return epoch_disc_loss / len(loader), epoch_gen_loss / len(loader)
