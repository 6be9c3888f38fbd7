# Source: https://github.com/rishikksh20/VocGAN/pull/24
# Report: the merged VocGAN fix converts the adversarial loss to a Python number before appending it to the per-epoch average list
# Shape: same GAN step and epoch history lists; adv_loss is appended as float(adv_loss) (works whether it is still 0.0 or a tensor), so no graph is kept
# Expect: near-miss: must be silent
import itertools

import torch
import tqdm


def train(model_g, model_d, optim_g, optim_d, trainloader, stft_loss, criterion, writer, hp):
    step = 0
    for epoch in itertools.count(1):
        avg_g_loss = []
        avg_d_loss = []
        avg_adv_loss = []
        loader = tqdm.tqdm(trainloader, desc="Loading train data")
        for mel, audio in loader:
            mel, audio = mel.cuda(), audio.cuda()
            step += 1

            optim_g.zero_grad()
            fake_audio = model_g(mel)[:, :, : audio.size(2)]
            sc_loss, mag_loss = stft_loss(fake_audio.squeeze(1), audio.squeeze(1))
            loss_g = sc_loss + mag_loss

            adv_loss = 0.0
            if step > hp.train.discriminator_train_start_steps:
                disc_fake = model_d(fake_audio)
                for feats_fake, score_fake in disc_fake:
                    adv_loss += criterion(score_fake, torch.ones_like(score_fake))
                adv_loss = adv_loss / len(disc_fake)
                loss_g += hp.model.lambda_adv * adv_loss
            loss_g.backward()
            optim_g.step()

            loss_d_avg = 0.0
            if step > hp.train.discriminator_train_start_steps:
                fake_audio = fake_audio.detach()
                loss_d_sum = 0.0
                for _ in range(hp.train.rep_discriminator):
                    optim_d.zero_grad()
                    disc_fake = model_d(fake_audio)
                    disc_real = model_d(audio)
                    loss_d = 0.0
                    for (_, score_fake), (_, score_real) in zip(disc_fake, disc_real):
                        loss_d += criterion(score_real, torch.ones_like(score_real))
                        loss_d += criterion(score_fake, torch.zeros_like(score_fake))
                    loss_d.backward()
                    optim_d.step()
                    loss_d_sum += loss_d.item()
                loss_d_avg = loss_d_sum / hp.train.rep_discriminator

            loss_g = loss_g.item()
            avg_g_loss.append(loss_g)
            avg_d_loss.append(loss_d_avg)
            avg_adv_loss.append(float(adv_loss))
            if step % hp.log.summary_interval == 0:
                writer.log_training(loss_g, loss_d_avg, adv_loss, step)
                loader.set_description(
                    "Avg : g %.04f d %.04f ad %.04f| step %d"
                    % (
                        sum(avg_g_loss) / len(avg_g_loss),
                        sum(avg_d_loss) / len(avg_d_loss),
                        sum(avg_adv_loss) / len(avg_adv_loss),
                        step,
                    )
                )
