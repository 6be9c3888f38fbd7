# Source: https://github.com/PlayVoice/VI-SVS/blob/4e95a9a56aee557e4118c83cf05e14a6db50b500/vits_extend/train.py
# Report: correct idiom: the VI-SVS (VITS-family) trainer resumes model_g/model_d and both optimizers with torch.load(chkpt_path, map_location='cpu') and lets load_state_dict copy onto each rank's device
# Shape: same resume helper as the TFGAN leak twin, with the checkpoint mapped to CPU first, so nothing lands on the saving GPU
# Expect: near-miss: must be silent
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
    checkpoint = torch.load(chkpt_path, map_location='cpu')
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
