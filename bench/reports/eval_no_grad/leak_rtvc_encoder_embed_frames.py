# Source: https://github.com/CorentinJ/Real-Time-Voice-Cloning/blob/23a4200865dfe36e0e017522e3c90234c3dcca24/encoder/inference.py
# Report: audited code: the GE2E speaker encoder's embed_frames_batch runs the LSTM forward for inference (model already in eval mode) with grad enabled, then `.detach().cpu().numpy()`; the synthesizer preprocessing calls it for every utterance of the corpus
# Shape: module-level _model set by load_model(); the per-batch helper (which re-asserts `_model.eval()` in its own scope) runs the forward with grad enabled, so each forward saves activations for a backward that never comes; the loop over utterances pays that peak every time
# Expect: TML003 line 36
from pathlib import Path

import numpy as np
import torch

from encoder import audio
from encoder.model import SpeakerEncoder
from encoder.audio import preprocess_wav

_model = None  # type: SpeakerEncoder
_device = None  # type: torch.device


def load_model(weights_fpath: Path, device=None):
    global _model, _device
    if device is None:
        _device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        _device = torch.device(device)
    _model = SpeakerEncoder(_device, torch.device("cpu"))
    checkpoint = torch.load(weights_fpath, _device)
    _model.load_state_dict(checkpoint["model_state"])
    _model.eval()
    print("Loaded encoder \"%s\" trained to step %d" % (weights_fpath.name, checkpoint["step"]))


def embed_frames_batch(frames_batch):
    if _model is None:
        raise Exception("Model was not loaded. Call load_model() before inference.")
    _model.eval()
    frames = torch.from_numpy(frames_batch).to(_device)
    embed = _model.forward(frames).detach().cpu().numpy()  # expect: TML003
    return embed


def embed_utterance(wav, mel_slices):
    frames = audio.wav_to_mel_spectrogram(wav)
    frames_batch = np.array([frames[s] for s in mel_slices])
    partial_embeds = embed_frames_batch(frames_batch)
    raw_embed = np.mean(partial_embeds, axis=0)
    return raw_embed / np.linalg.norm(raw_embed, 2)


def create_embeddings(fpaths, encoder_model_fpath, slicer):
    if _model is None:
        load_model(encoder_model_fpath)
    for wav_fpath, embed_fpath in fpaths:
        wav = preprocess_wav(np.load(wav_fpath))
        embed = embed_utterance(wav, slicer(len(wav)))
        np.save(embed_fpath, embed, allow_pickle=False)
