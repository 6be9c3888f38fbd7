# Source: https://github.com/rishikksh20/TFGAN/blob/005692d29df77339449cbd9c08a2dab63fdc4b46/utils/train.py
# Report: audited bug in the TFGAN vocoder trainer (epoch-long avg_adv_loss list fed with the graph-attached adversarial loss); this is the fixed form, converting to a Python float before storing, as the sibling VocGAN trainer did with .item()
# Shape: same loop; adv_loss (a float 0.0 before the discriminator starts, a tensor afterwards) is stored as float(adv_loss), so no tensor or graph outlives the step
# Expect: near-miss: must be silent
import math
import itertools

import torch
import tqdm


def train_epochs(hp, model_g, model_d, model_f, optim_g, optim_d, trainloader,
                 stft_loss, time_loss, writer, logger, step=0, init_epoch=-1):
    criterion = torch.nn.MSELoss().cuda()
    for epoch in itertools.count(init_epoch + 1):
        loader = tqdm.tqdm(trainloader, desc='Loading train data')
        avg_g_loss = []
        avg_d_loss = []
        avg_adv_loss = []
        for (melG, audioG), (melD, audioD) in loader:
            melG, audioG = melG.cuda(), audioG.cuda()
            melD, audioD = melD.cuda(), audioD.cuda()

            optim_g.zero_grad()
            fake_audio = model_g(melG)[:, :, :hp.audio.segment_length]
            sc_loss, mag_loss = stft_loss(fake_audio.squeeze(1), audioG.squeeze(1))
            loss_g = sc_loss + mag_loss
            loss_g += hp.model.lambda_time_loss * time_loss(audioG.squeeze(1), fake_audio.squeeze(1))

            adv_loss = 0.0
            if step > hp.train.discriminator_train_start_steps:
                disc_fake_g = model_d(fake_audio)
                for feats_fake, score_fake in disc_fake_g:
                    adv_loss += criterion(score_fake, torch.ones_like(score_fake))
                adv_loss = adv_loss / len(disc_fake_g)
                freq_fake = model_f(fake_audio.squeeze(1))
                adv_loss += criterion(freq_fake, torch.ones_like(freq_fake))
                loss_g += hp.model.lambda_adv * adv_loss
            loss_g.backward()
            optim_g.step()

            loss_d_avg = 0.0
            if step > hp.train.discriminator_train_start_steps:
                fake_audio = model_g(melD)[:, :, :hp.audio.segment_length].detach()
                optim_d.zero_grad()
                disc_fake = model_d(fake_audio)
                disc_real = model_d(audioD)
                loss_d = 0.0
                for (_, s_fake), (_, s_real) in zip(disc_fake, disc_real):
                    loss_d += criterion(s_real, torch.ones_like(s_real))
                    loss_d += criterion(s_fake, torch.zeros_like(s_fake))
                loss_d.backward()
                optim_d.step()
                loss_d_avg = loss_d.item()

            step += 1
            loss_g = loss_g.item()
            avg_g_loss.append(loss_g)
            avg_d_loss.append(loss_d_avg)
            avg_adv_loss.append(float(adv_loss))
            if math.isnan(loss_g) or loss_g > 1e8:
                logger.error("loss_g %.01f at step %d!" % (loss_g, step))
                raise Exception("Loss exploded")
            if step % hp.log.summary_interval == 0:
                writer.log_training(loss_g, loss_d_avg, adv_loss, step)
                loader.set_description("Avg : g %.04f d %.04f ad %.04f| step %d" % (
                    sum(avg_g_loss) / len(avg_g_loss),
                    sum(avg_d_loss) / len(avg_d_loss),
                    sum(avg_adv_loss) / len(avg_adv_loss),
                    step))
    return step
