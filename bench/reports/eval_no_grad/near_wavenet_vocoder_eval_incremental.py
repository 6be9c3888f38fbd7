# Source: https://github.com/r9y9/wavenet_vocoder/commit/32b1b90749391e9604e1545e3a9e24bb49a483df
# Report: "Running out of GPU memory!" while training the WaveNet vocoder; the periodic eval_model() generated a whole utterance sample by sample with model.incremental_forward() outside torch.no_grad(), so every step's activations stayed saved; fixed by "Forgot torch.no_grad" (source also: issue https://github.com/r9y9/wavenet_vocoder/issues/18)
# Shape: the fixed eval_model(): the same eval-mode autoregressive generation, now inside `with torch.no_grad():`; the train step that calls it is unchanged
# Expect: near-miss: must be silent
import os
from os.path import join

import numpy as np
import torch
from tqdm import tqdm

from wavenet_vocoder.util import is_mulaw, is_mulaw_quantize
import audio
from hparams import hparams
from nnmnkwii import preprocessing as P


def _initial_input(device):
    if is_mulaw_quantize(hparams.input_type):
        initial_value = P.mulaw_quantize(0, hparams.quantize_channels)
        initial_input = torch.zeros(1, 1, hparams.quantize_channels)
        initial_input[:, :, initial_value] = 1.0
    elif is_mulaw(hparams.input_type):
        initial_input = torch.zeros(1, 1, 1).fill_(P.mulaw(0.0, hparams.quantize_channels))
    else:
        initial_input = torch.zeros(1, 1, 1)
    return initial_input.to(device)


def eval_model(global_step, writer, device, model, y, c, g, input_lengths, eval_dir):
    model.eval()
    idx = np.random.randint(0, len(y))
    length = input_lengths[idx].data.cpu().item()

    # (T,)
    y_target = y[idx].view(-1).data.cpu().numpy()[:length]
    if c is not None:
        c = c[idx, :, :length].unsqueeze(0)
    if g is not None:
        g = g[idx]

    initial_input = _initial_input(device)

    # Run the model in fast eval mode
    with torch.no_grad():
        y_hat = model.incremental_forward(initial_input, c=c, g=g, T=length, softmax=True, quantize=True, tqdm=tqdm, log_scale_min=hparams.log_scale_min)

    if is_mulaw_quantize(hparams.input_type):
        y_hat = y_hat.max(1)[1].view(-1).long().cpu().data.numpy()
        y_hat = P.inv_mulaw_quantize(y_hat, hparams.quantize_channels)
        y_target = P.inv_mulaw_quantize(y_target, hparams.quantize_channels)
    elif is_mulaw(hparams.input_type):
        y_hat = P.inv_mulaw(y_hat.view(-1).cpu().data.numpy(), hparams.quantize_channels)
        y_target = P.inv_mulaw(y_target, hparams.quantize_channels)
    else:
        y_hat = y_hat.view(-1).cpu().data.numpy()

    os.makedirs(eval_dir, exist_ok=True)
    audio.save_wav(y_hat, join(eval_dir, "step{:09d}_predicted.wav".format(global_step)))
    audio.save_wav(y_target, join(eval_dir, "step{:09d}_target.wav".format(global_step)))
    writer.add_audio("Predicted audio signal", y_hat, global_step, sample_rate=hparams.sample_rate)


def train_step(device, global_step, model, optimizer, writer, criterion, x, y, c, g,
               input_lengths, eval_dir, do_eval=False):
    model.train()
    optimizer.zero_grad()
    x, y = x.to(device), y.to(device)
    input_lengths = input_lengths.to(device)
    c = c.to(device) if c is not None else None
    g = g.to(device) if g is not None else None

    y_hat = model(x, c=c, g=g, softmax=False)
    loss = criterion(y_hat[:, :, :-1], y[:, 1:, :])

    if do_eval:
        eval_model(global_step, writer, device, model, y, c, g, input_lengths, eval_dir)
        model.train()

    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), hparams.clip_thresh)
    optimizer.step()
    writer.add_scalar("train loss", float(loss.item()), global_step)
    return loss.item()
