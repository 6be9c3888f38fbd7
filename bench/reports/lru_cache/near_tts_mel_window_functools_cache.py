# Source: https://github.com/spencersutton/index-tts/blob/168e96d9413737dbf573b3e6f30591a0268539cc/indextts/s2mel/modules/audio.py
# Report: audit of a TTS fork's mel front end that memoised GPU filterbank / window tensors with functools.cache; the variant here memoises only the host-side numpy filterbank
# Shape: the same vocoder fine-tuning loop; functools.cache now wraps a function returning a numpy float32 array, and mel_spectrogram() moves it to y.device / y.dtype and builds the window per call
# Expect: near-miss: must be silent
import functools

import numpy as np
import torch
import torch.nn.functional as F
from librosa.filters import mel as librosa_mel_fn
from torch import Tensor

N_FFT = 1024
WIN_SIZE = 1024
HOP_SIZE = 256
NUM_MELS = 80
SAMPLING_RATE = 22050
F_MIN, F_MAX = 0.0, SAMPLING_RATE / 2.0


@functools.cache
def get_mel_filterbank() -> np.ndarray:
    # host-side numpy array: only the (tiny) filterbank is memoised, never a device tensor
    fb = librosa_mel_fn(sr=SAMPLING_RATE, n_fft=N_FFT, n_mels=NUM_MELS, fmin=F_MIN, fmax=F_MAX)
    return fb.astype(np.float32)


def mel_spectrogram(y: Tensor) -> Tensor:
    pad = (N_FFT - HOP_SIZE) // 2
    y = F.pad(y.unsqueeze(1), (pad, pad), mode="reflect").squeeze(1)
    mel_basis = torch.from_numpy(get_mel_filterbank()).to(device=y.device, dtype=y.dtype)
    hann_window = torch.hann_window(WIN_SIZE, device=y.device, dtype=y.dtype)
    spec = torch.stft(y, N_FFT, hop_length=HOP_SIZE, win_length=WIN_SIZE, window=hann_window,
                      center=False, normalized=False, onesided=True, return_complex=True)
    spec = torch.sqrt(spec.real.pow(2) + spec.imag.pow(2) + 1e-9)
    return torch.log(torch.clamp(mel_basis @ spec, min=1e-5))


def feature_loss(fmap_real, fmap_fake):
    return sum(F.l1_loss(fr.detach(), ff) for dr, df in zip(fmap_real, fmap_fake) for fr, ff in zip(dr, df))


def finetune_vocoder(generator, mpd, optim_g, optim_d, loader, steps=200_000, device="cuda"):
    """Fine-tune the mel->wave vocoder on the speaker's recordings (HiFi-GAN recipe)."""
    generator.train()
    mpd.train()
    step = 0
    while step < steps:
        for mel, wav in loader:
            mel, wav = mel.to(device, non_blocking=True), wav.to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                wav_hat = generator(mel).squeeze(1)

            real_logits, _ = mpd(wav.unsqueeze(1))
            fake_logits, _ = mpd(wav_hat.detach().float().unsqueeze(1))
            loss_d = sum(((1 - r) ** 2).mean() + (f ** 2).mean() for r, f in zip(real_logits, fake_logits))
            optim_d.zero_grad(set_to_none=True)
            loss_d.backward()
            optim_d.step()

            loss_mel = F.l1_loss(mel_spectrogram(wav_hat.float()), mel_spectrogram(wav)) * 45
            fake_logits, fmap_fake = mpd(wav_hat.float().unsqueeze(1))
            _, fmap_real = mpd(wav.unsqueeze(1))
            loss_adv = sum(((1 - f) ** 2).mean() for f in fake_logits)
            loss_g = loss_adv + feature_loss(fmap_real, fmap_fake) * 2 + loss_mel
            optim_g.zero_grad(set_to_none=True)
            loss_g.backward()
            optim_g.step()

            if step % 100 == 0:
                print(f"step {step} d {loss_d.item():.3f} g {loss_g.item():.3f} mel {loss_mel.item():.3f}")
            step += 1
            if step >= steps:
                return
