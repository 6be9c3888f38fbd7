# Source: https://github.com/seungwonpark/melgan/blob/39895195d08b526740107474111d706998a25ed2/utils/train.py
# Report: audited idiom: MelGAN sums the discriminator loss over hp.train.rep_discriminator steps in a per-batch local (`loss_d_sum += loss_d`) and takes `.item()` before logging
# Shape: same run-long tracker, but the inner discriminator loop hands it `loss_d.item()`, so update() only sums Python floats
# Expect: near-miss: must be silent
import itertools
import math

import torch
import tqdm

from model.generator import Generator
from model.multiscale import MultiScaleDiscriminator
from model.loss import get_loss_g, get_loss_d


class DiscLossTracker:
    def __init__(self):
        self.loss_d_sum = 0.0
        self.count = 0

    def update(self, val):
        self.loss_d_sum += val
        self.count += 1

    def average(self):
        return self.loss_d_sum / max(self.count, 1)


def train(args, trainloader, writer, logger, hp):
    model_g = Generator(hp.audio.n_mel_channels).cuda()
    model_d = MultiScaleDiscriminator().cuda()
    optim_g = torch.optim.Adam(model_g.parameters(), lr=hp.train.adam.lr,
                               betas=(hp.train.adam.beta1, hp.train.adam.beta2))
    optim_d = torch.optim.Adam(model_d.parameters(), lr=hp.train.adam.lr,
                               betas=(hp.train.adam.beta1, hp.train.adam.beta2))
    tracker = DiscLossTracker()
    step = 0
    model_g.train()
    model_d.train()
    for epoch in itertools.count(0):
        trainloader.dataset.shuffle_mapping()
        loader = tqdm.tqdm(trainloader, desc="Loading train data")
        for (melG, audioG), (melD, audioD) in loader:
            melG, audioG = melG.cuda(), audioG.cuda()
            melD, audioD = melD.cuda(), audioD.cuda()

            # generator
            optim_g.zero_grad()
            fake_audio = model_g(melG)[:, :, :hp.audio.segment_length]
            disc_fake = model_d(fake_audio)
            disc_real = model_d(audioG)
            loss_g = get_loss_g(hp.model.feat_match, disc_fake, disc_real)
            loss_g.backward()
            optim_g.step()

            # discriminator
            fake_audio = model_g(melD)[:, :, :hp.audio.segment_length].detach()
            for _ in range(hp.train.rep_discriminator):
                optim_d.zero_grad()
                disc_fake = model_d(fake_audio)
                disc_real = model_d(audioD)
                loss_d = get_loss_d(disc_fake, disc_real)
                loss_d.backward()
                optim_d.step()
                tracker.update(loss_d.item())

            step += 1
            loss_g = loss_g.item()
            loss_d_avg = float(tracker.average())
            if loss_g > 1e8 or math.isnan(loss_g) or loss_d_avg > 1e8 or math.isnan(loss_d_avg):
                logger.error("loss_g %.01f loss_d_avg %.01f at step %d!" % (loss_g, loss_d_avg, step))
                raise Exception("Loss exploded")
            if step % hp.log.summary_interval == 0:
                writer.log_training(loss_g, loss_d_avg, step)
                loader.set_description("g %.04f d %.04f | step %d" % (loss_g, loss_d_avg, step))
