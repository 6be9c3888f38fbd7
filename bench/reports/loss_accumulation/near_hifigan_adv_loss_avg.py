# Source: https://github.com/rishikksh20/HiFi-GAN/blob/090b8af534c8019515737fe2ebdcc087e74c1f8a/utils/train.py
# Report: multi-band HiFi-GAN trainer keeps per-step losses in per-epoch lists for a tqdm running average; fixed variant reduces the adversarial loss to a Python float before keeping it (as the author did in VocGAN with .item())
# Shape: float(adv_loss) works whether adv_loss is still the 0.0 float or a CUDA 0-dim tensor; the lists only hold Python numbers, loss_d_sum takes .item(), and the += into adv_loss/loss_g/loss_d is the intended per-step sum that is backpropagated
# Expect: near-miss: must be silent
import itertools
import math

import torch
import tqdm


def train(hp, model_g, model_d, model_d_mpd, optim_g, optim_d, trainloader, stft_loss, writer, logger):
    criterion = torch.nn.MSELoss().cuda()
    step = 0
    model_g.train()
    model_d.train()
    for epoch in itertools.count(0):
        loader = tqdm.tqdm(trainloader, desc="Loading train data")
        avg_g_loss = []
        avg_d_loss = []
        avg_adv_loss = []
        for (melG, audioG), (melD, audioD) in loader:
            melG, audioG = melG.cuda(), audioG.cuda()
            melD, audioD = melD.cuda(), audioD.cuda()

            # generator
            optim_g.zero_grad()
            fake_audio = model_g(melG)[:, :, :hp.segment_length]
            sc_loss, mag_loss = stft_loss(fake_audio.squeeze(1), audioG.squeeze(1))
            loss_g = sc_loss + mag_loss

            adv_loss = 0.0
            if step > hp.discriminator_train_start_steps:
                disc_fake = model_d(fake_audio)
                for _, score_fake in disc_fake:
                    adv_loss += criterion(score_fake, torch.ones_like(score_fake))
                adv_loss = adv_loss / len(disc_fake)
                mpd_fake = model_d_mpd(fake_audio)
                adv_mpd_loss = 0.0
                for score_fake in mpd_fake:
                    adv_mpd_loss += criterion(score_fake, torch.ones_like(score_fake))
                adv_loss = adv_loss + adv_mpd_loss / len(mpd_fake)
                loss_g = loss_g + hp.lambda_adv * adv_loss
            loss_g.backward()
            optim_g.step()

            # discriminator
            loss_d_avg = 0.0
            if step > hp.discriminator_train_start_steps:
                fake_audio = model_g(melD)[:, :, :hp.segment_length].detach()
                loss_d_sum = 0.0
                for _ in range(hp.rep_discriminator):
                    optim_d.zero_grad()
                    loss_d = 0.0
                    for (_, s_fake), (_, s_real) in zip(model_d(fake_audio), model_d(audioD)):
                        loss_d += criterion(s_real, torch.ones_like(s_real))
                        loss_d += criterion(s_fake, torch.zeros_like(s_fake))
                    loss_d.backward()
                    optim_d.step()
                    loss_d_sum += loss_d.item()
                loss_d_avg = loss_d_sum / hp.rep_discriminator

            step += 1
            loss_g = loss_g.item()
            avg_g_loss.append(loss_g)
            avg_d_loss.append(loss_d_avg)
            avg_adv_loss.append(float(adv_loss))

            if loss_g > 1e8 or math.isnan(loss_g):
                logger.error("loss_g %.01f at step %d!" % (loss_g, step))
                raise Exception("Loss exploded")

            if step % hp.summary_interval == 0:
                writer.log_training(loss_g, loss_d_avg, adv_loss, step)
                loader.set_description(
                    "Avg : g %.04f d %.04f ad %.04f| step %d"
                    % (sum(avg_g_loss) / len(avg_g_loss),
                       sum(avg_d_loss) / len(avg_d_loss),
                       sum(avg_adv_loss) / len(avg_adv_loss),
                       step))
