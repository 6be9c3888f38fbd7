# Source: https://github.com/RVC-Boss/GPT-SoVITS/issues/1803
# Report: https://github.com/RVC-Boss/GPT-SoVITS/issues/1803 - memory blows up during SSL (cnhubert) feature extraction of the dataset; the reporter's fix wraps the HuBERT forward in torch.no_grad() (PR #1804 also added a per-file empty_cache, which the maintainer rejected as slow)
# Shape: the fix proposed in the issue: the HuBERT forward in name2go runs under torch.no_grad(), so the .cpu() copy saved per wav carries no graph; following the maintainer's review, no per-file empty_cache, only one after the whole dataset loop
# Expect: near-miss: must be silent
import os
import shutil
import sys
import traceback
from time import time as ttime

import librosa
import numpy as np
import torch
from torch import nn
from scipy.io import wavfile
from transformers import HubertModel, Wav2Vec2FeatureExtractor

from my_utils import load_audio, clean_path

inp_text = os.environ.get("inp_text")
inp_wav_dir = os.environ.get("inp_wav_dir")
i_part = os.environ.get("i_part")
all_parts = os.environ.get("all_parts")
opt_dir = os.environ.get("opt_dir")
cnhubert_base_path = os.environ.get("cnhubert_base_dir")
is_half = eval(os.environ.get("is_half", "True"))


class CNHubert(nn.Module):
    def __init__(self, base_path):
        super().__init__()
        self.model = HubertModel.from_pretrained(base_path, local_files_only=True)
        self.feature_extractor = Wav2Vec2FeatureExtractor.from_pretrained(base_path, local_files_only=True)

    def forward(self, x):
        input_values = self.feature_extractor(x, return_tensors="pt", sampling_rate=16000).input_values.to(x.device)
        return self.model(input_values)["last_hidden_state"]


def get_model():
    model = CNHubert(cnhubert_base_path)
    model.eval()
    return model


def my_save(fea, path):  # torch.save does not support non-ascii paths
    tmp_path = "%s/%s%s.pth" % (os.path.dirname(path), ttime(), i_part)
    torch.save(fea, tmp_path)
    shutil.move(tmp_path, path)


hubert_dir = "%s/4-cnhubert" % opt_dir
wav32dir = "%s/5-wav32k" % opt_dir
maxx, alpha = 0.95, 0.5
device = "cuda:0" if torch.cuda.is_available() else "cpu"
model = get_model()
model = model.half().to(device) if is_half else model.to(device)
nan_fails = []


def name2go(wav_name, wav_path):
    hubert_path = "%s/%s.pt" % (hubert_dir, wav_name)
    if os.path.exists(hubert_path):
        return
    tmp_audio = load_audio(wav_path, 32000)
    tmp_max = np.abs(tmp_audio).max()
    if tmp_max > 2.2:
        print("%s-filtered,%s" % (wav_name, tmp_max))
        return
    tmp_audio32 = (tmp_audio / tmp_max * (maxx * alpha * 32768)) + ((1 - alpha) * 32768) * tmp_audio
    tmp_audio32b = (tmp_audio / tmp_max * (maxx * alpha * 1145.14)) + ((1 - alpha) * 1145.14) * tmp_audio
    tmp_audio = librosa.resample(tmp_audio32b, orig_sr=32000, target_sr=16000)
    tensor_wav16 = torch.from_numpy(tmp_audio)
    tensor_wav16 = tensor_wav16.half().to(device) if is_half else tensor_wav16.to(device)
    with torch.no_grad():
        ssl = model.model(tensor_wav16.unsqueeze(0))["last_hidden_state"].transpose(1, 2).cpu()
    if np.isnan(ssl.detach().numpy()).sum() != 0:
        nan_fails.append((wav_name, wav_path))
        print("nan filtered:%s" % wav_name)
        return
    wavfile.write("%s/%s" % (wav32dir, wav_name), 32000, tmp_audio32.astype("int16"))
    my_save(ssl, hubert_path)


with open(inp_text, "r", encoding="utf8") as f:
    lines = f.read().strip("\n").split("\n")

for line in lines[int(i_part)::int(all_parts)]:
    try:
        wav_name, spk_name, language, text = line.split("|")
        wav_name = clean_path(wav_name)
        if inp_wav_dir:
            wav_name = os.path.basename(wav_name)
            wav_path = "%s/%s" % (inp_wav_dir, wav_name)
        else:
            wav_path = wav_name
            wav_name = os.path.basename(wav_name)
        name2go(wav_name, wav_path)
    except Exception:
        print(line, traceback.format_exc())

if torch.cuda.is_available():
    torch.cuda.empty_cache()
