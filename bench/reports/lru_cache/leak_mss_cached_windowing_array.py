# Source: https://github.com/ZFTurbo/Music-Source-Separation-Training/pull/49
# Report: PR #49 (commit e205312, fixed up in 719cfb0) put functools.cache on _getWindowingArray, which builds the crossfade window tensor for chunked source-separation inference; demix_track then writes into the cached tensor in place; the cache was removed again in 13ce54a
# Shape: same helper and demix loop: the cache keys on (chunk_size, fade_size), keeps one tensor per configuration for the life of the process and hands the same storage to every call, which then edits it
# Expect: TML012 line 18
from functools import cache

import numpy as np
import torch
import torch.nn as nn
from tqdm import tqdm


def get_model_from_config(model_type, config_path):
    from models import build_model  # project helper
    return build_model(model_type, config_path)


@cache  # expect: TML012
def _getWindowingArray(window_size, fade_size):
    fadein = torch.linspace(0, 1, fade_size)
    fadeout = torch.linspace(1, 0, fade_size)
    window = torch.ones(window_size)
    window[-fade_size:] *= fadeout
    window[:fade_size] *= fadein
    return window


def demix_track(config, model, mix, device, pbar=False):
    C = config.audio.chunk_size
    N = config.inference.num_overlap
    fade_size = C // 10
    step = int(C // N)
    border = C - step
    batch_size = config.inference.batch_size
    length_init = mix.shape[-1]
    if length_init > 2 * border and (border > 0):
        mix = nn.functional.pad(mix, (border, border), mode='reflect')

    # crossfades at segment boundaries to mitigate clicking artifacts
    windowingArray = _getWindowingArray(C, fade_size)

    with torch.inference_mode():
        req_shape = (len(config.training.instruments),) + tuple(mix.shape)
        result = torch.zeros(req_shape, dtype=torch.float32)
        counter = torch.zeros(req_shape, dtype=torch.float32)
        i = 0
        batch_data, batch_locations = [], []
        progress_bar = tqdm(total=mix.shape[1], leave=False) if pbar else None
        while i < mix.shape[1]:
            part = mix[:, i:i + C].to(device)
            length = part.shape[-1]
            if length < C:
                part = nn.functional.pad(part, (0, C - length, 0, 0), mode='constant', value=0)
            batch_data.append(part)
            batch_locations.append((i, length))
            i += step
            if len(batch_data) >= batch_size or (i >= mix.shape[1]):
                x = model(torch.stack(batch_data, dim=0))
                window = windowingArray
                if i - step == 0:  # first chunk: no fade-in
                    window[:fade_size] = 1
                elif i >= mix.shape[1]:  # last chunk: no fade-out
                    window[-fade_size:] = 1
                for j, (start, l) in enumerate(batch_locations):
                    result[..., start:start + l] += x[j][..., :l].cpu() * window[..., :l]
                    counter[..., start:start + l] += window[..., :l]
                batch_data, batch_locations = [], []
            if progress_bar:
                progress_bar.update(step)

        estimated_sources = (result / counter).cpu().numpy()
        np.nan_to_num(estimated_sources, copy=False, nan=0.0)
        if length_init > 2 * border and (border > 0):
            estimated_sources = estimated_sources[..., border:-border]
    return {k: v for k, v in zip(config.training.instruments, estimated_sources)}
