# Source: https://github.com/rishikksh20/TFGAN/blob/005692d29df77339449cbd9c08a2dab63fdc4b46/utils/train.py
# Report: audited code: the TFGAN vocoder trainer resumes generator, two discriminators and both Adam states with torch.load(chkpt_path) and no map_location, so every tensor is first materialised on the GPU it was saved from
# Shape: resume helper kept as in the trainer; the checkpoint dict (model_g, model_d, model_f, optim_g, optim_d) comes back on the saving device before load_state_dict copies it
# Expect: TML011 line 35
import itertools

import torch
from model.generator import Generator
from model.multiscale import MultiScaleDiscriminator
from model.freq_discriminator import FrequencyDiscriminator


def build(hp):
    model_g = Generator(hp.audio.n_mel_channels, hp.model.n_residual_layers,
                        ratios=hp.model.generator_ratio, mult=hp.model.mult,
                        out_band=hp.model.out_channels).cuda()
    model_d = MultiScaleDiscriminator(hp.model.num_D, hp.model.ndf, hp.model.n_layers,
                                      hp.model.downsampling_factor, hp.model.disc_out).cuda()
    model_f = FrequencyDiscriminator().cuda()
    optim_g = torch.optim.Adam(model_g.parameters(), lr=hp.train.adam.lr,
                               betas=(hp.train.adam.beta1, hp.train.adam.beta2))
    optim_d = torch.optim.Adam(itertools.chain(model_d.parameters(), model_f.parameters()),
                               lr=hp.train.adam.lr,
                               betas=(hp.train.adam.beta1, hp.train.adam.beta2))
    return model_g, model_d, model_f, optim_g, optim_d


def resume(chkpt_path, hp, hp_str, githash, logger):
    model_g, model_d, model_f, optim_g, optim_d = build(hp)
    init_epoch, step = -1, 0
    if chkpt_path is None:
        logger.info("Starting new training run.")
        return model_g, model_d, model_f, optim_g, optim_d, init_epoch, step
    logger.info("Resuming from checkpoint: %s" % chkpt_path)
    checkpoint = torch.load(chkpt_path)  # expect: TML011
    model_g.load_state_dict(checkpoint['model_g'])
    model_d.load_state_dict(checkpoint['model_d'])
    model_f.load_state_dict(checkpoint['model_f'])
    optim_g.load_state_dict(checkpoint['optim_g'])
    optim_d.load_state_dict(checkpoint['optim_d'])
    step = checkpoint['step']
    init_epoch = checkpoint['epoch']
    if hp_str != checkpoint['hp_str']:
        logger.warning("New hparams is different from checkpoint. Will use new.")
    if githash != checkpoint['githash']:
        logger.warning("Code might be different: git hash is different.")
    return model_g, model_d, model_f, optim_g, optim_d, init_epoch, step
