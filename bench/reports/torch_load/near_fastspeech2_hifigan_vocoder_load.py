# Source: https://github.com/ming024/FastSpeech2/issues/233
# Report: train.py selects cuda:1, yet CUDA OOM on the first GPU inside get_vocoder -> torch.load("hifigan/generator_LJSpeech.pth.tar"): the HiFi-GAN checkpoint is restored onto the device it was saved from (source note: code: https://github.com/ming024/FastSpeech2/blob/14f23c368c1c02dc31c53d0f2435321ed5296315/utils/model.py)
# Shape: same helpers, but every torch.load maps the checkpoint to the chosen device (or CPU) before load_state_dict
# Expect: near-miss: must be silent
import json
import os

import torch

import hifigan
from model import FastSpeech2, ScheduledOptim


def load_ckpt(train_config, restore_step, device):
    ckpt_path = os.path.join(train_config["path"]["ckpt_path"], "{}.pth.tar".format(restore_step))
    return torch.load(ckpt_path, map_location=device)


def get_model(args, configs, device, train=False):
    preprocess_config, model_config, train_config = configs
    model = FastSpeech2(preprocess_config, model_config).to(device)
    ckpt = None
    if args.restore_step:
        ckpt = load_ckpt(train_config, args.restore_step, device)
        model.load_state_dict(ckpt["model"])
    if train:
        scheduled_optim = ScheduledOptim(model, train_config, model_config, args.restore_step)
        if ckpt is not None:
            scheduled_optim.load_state_dict(ckpt["optimizer"])
        model.train()
        return model, scheduled_optim
    model.eval()
    return model


VOCODER_CKPTS = {
    "LJSpeech": "hifigan/generator_LJSpeech.pth.tar",
    "universal": "hifigan/generator_universal.pth.tar",
}


def get_vocoder(config, device):
    name = config["vocoder"]["model"]
    speaker = config["vocoder"]["speaker"]
    if name == "MelGAN":
        tag = "linda_johnson" if speaker == "LJSpeech" else "multi_speaker"
        vocoder = torch.hub.load("descriptinc/melgan-neurips", "load_melgan", tag)
        vocoder.mel2wav.eval()
        vocoder.mel2wav.to(device)
    elif name == "HiFi-GAN":
        with open("hifigan/config.json", "r") as f:
            h = hifigan.AttrDict(json.load(f))
        vocoder = hifigan.Generator(h)
        ckpt = torch.load(VOCODER_CKPTS[speaker], map_location="cpu")
        vocoder.load_state_dict(ckpt["generator"])
        vocoder.eval()
        vocoder.remove_weight_norm()
        vocoder.to(device)
    return vocoder
