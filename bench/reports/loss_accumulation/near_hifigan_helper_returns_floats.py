# Source: https://github.com/pytorch/pytorch/issues/144181
# Report: adding loss.item() (a Python float) instead of the tensor keeps the averages without holding any graph.
# Shape: same helper returning the two losses; the epoch sums add their .item().
# Expect: near-miss: must be silent
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
        epoch_disc_loss += loss_disc.item()
        epoch_gen_loss += loss_gen.item()
    return epoch_disc_loss / len(loader), epoch_gen_loss / len(loader)
