# Source: https://github.com/openai/whisper/blob/06dc24a5ad0895bc28a6e5f39f776045b3705784/whisper/audio.py
# Report: audited repository code: whisper's mel_filters(device, n_mels) is decorated with @lru_cache(maxsize=None) and returns the mel filterbank already moved to `device`, so the cache keeps a device tensor per (device, n_mels) key for the life of the process
# Shape: near-miss: the cache is kept but holds only the host-side numpy filterbank (keyed by n_mels); the device tensor is built by an uncached mel_filters(device, n_mels) wrapper on every call, so no tensor lives in the cache
# Expect: near-miss: must be silent
import os
from functools import lru_cache
from typing import Optional, Union

import numpy as np
import torch
import torch.nn.functional as F

SAMPLE_RATE = 16000
N_FFT = 400
N_MELS = 80
HOP_LENGTH = 160


@lru_cache(maxsize=None)
def _mel_filters_np(n_mels: int = N_MELS) -> np.ndarray:
    """Load the mel filterbank matrix that projects an STFT onto a mel spectrogram."""
    assert n_mels in (80, 128), f"Unsupported n_mels: {n_mels}"
    filters_path = os.path.join(os.path.dirname(__file__), "assets", "mel_filters.npz")
    with np.load(filters_path, allow_pickle=False) as f:
        return f[f"mel_{n_mels}"]


def mel_filters(device, n_mels: int = N_MELS) -> torch.Tensor:
    return torch.from_numpy(_mel_filters_np(n_mels)).to(device)


def log_mel_spectrogram(
    audio: Union[np.ndarray, torch.Tensor],
    n_mels: int = N_MELS,
    padding: int = 0,
    device: Optional[Union[str, torch.device]] = None,
):
    if not torch.is_tensor(audio):
        audio = torch.from_numpy(audio)
    if device is not None:
        audio = audio.to(device)
    if padding > 0:
        audio = F.pad(audio, (0, padding))
    window = torch.hann_window(N_FFT).to(audio.device)
    stft = torch.stft(audio, N_FFT, HOP_LENGTH, window=window, return_complex=True)
    magnitudes = stft[..., :-1].abs() ** 2

    filters = mel_filters(audio.device, n_mels)
    mel_spec = filters @ magnitudes

    log_spec = torch.clamp(mel_spec, min=1e-10).log10()
    log_spec = torch.maximum(log_spec, log_spec.max() - 8.0)
    return (log_spec + 4.0) / 4.0
