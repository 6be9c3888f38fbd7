# Source: https://github.com/jik876/hifi-gan/blob/1198d8ce1ef76545185c2ea96849f990d444b6bd/meldataset.py
# Report: HiFi-GAN vocoder with its module-level mel_basis / hann_window dicts replaced by an lru_cache'd helper returning the CUDA filterbank and window (one refactor away from the repository)
# Shape: @functools.lru_cache on _mel_and_window(..., device) that returns device tensors: the cache keeps them (one entry per argument combination) for the life of the process and never frees them
# Expect: TML012 line 12
import functools

import torch
import torch.nn.functional as F
from librosa.filters import mel as librosa_mel_fn


@functools.lru_cache(maxsize=None)  # expect: TML012
def _mel_and_window(sampling_rate, n_fft, num_mels, fmin, fmax, win_size, device):
    mel = librosa_mel_fn(sr=sampling_rate, n_fft=n_fft, n_mels=num_mels, fmin=fmin, fmax=fmax)
    return torch.from_numpy(mel).float().to(device), torch.hann_window(win_size).to(device)


def mel_spectrogram(y, n_fft, num_mels, sampling_rate, hop_size, win_size, fmin, fmax, center=False):
    basis, window = _mel_and_window(sampling_rate, n_fft, num_mels, fmin, fmax, win_size, y.device)

    pad = int((n_fft - hop_size) / 2)
    y = F.pad(y.unsqueeze(1), (pad, pad), mode='reflect').squeeze(1)
    spec = torch.stft(y, n_fft, hop_length=hop_size, win_length=win_size, window=window,
                      center=center, pad_mode='reflect', normalized=False, onesided=True, return_complex=True)
    spec = torch.sqrt(spec.abs().pow(2) + 1e-9)
    spec = torch.matmul(basis, spec)
    return torch.log(torch.clamp(spec, min=1e-5))


def train_epoch(generator, mpd, discriminator_loss, generator_loss, optim_g, optim_d, loader, h, device, steps):
    generator.train()
    for batch in loader:
        x, y, _, y_mel = batch
        x, y, y_mel = x.to(device), y.to(device).unsqueeze(1), y_mel.to(device)
        y_g_hat = generator(x)
        y_g_hat_mel = mel_spectrogram(y_g_hat.squeeze(1), h.n_fft, h.num_mels, h.sampling_rate,
                                      h.hop_size, h.win_size, h.fmin, h.fmax_for_loss)

        optim_d.zero_grad()
        y_df_hat_r, y_df_hat_g, _, _ = mpd(y, y_g_hat.detach())
        loss_disc_all = discriminator_loss(y_df_hat_r, y_df_hat_g)
        loss_disc_all.backward()
        optim_d.step()

        optim_g.zero_grad()
        loss_mel = F.l1_loss(y_mel, y_g_hat_mel) * 45
        _, y_df_hat_g, _, _ = mpd(y, y_g_hat)
        loss_gen_all = generator_loss(y_df_hat_g) + loss_mel
        loss_gen_all.backward()
        optim_g.step()

        if steps % h.stdout_interval == 0:
            with torch.no_grad():
                mel_error = F.l1_loss(y_mel, y_g_hat_mel).item()
            print(f"Steps : {steps:d}, Gen Loss Total : {loss_gen_all.item():4.3f}, Mel-Spec. Error : {mel_error:4.3f}")
        steps += 1
    return steps
