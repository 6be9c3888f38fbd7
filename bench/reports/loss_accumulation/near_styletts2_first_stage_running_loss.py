# Source: https://github.com/yl4579/StyleTTS2/blob/11cb0cb9c49fed99b432d43766dc1774cbb71be9/train_first.py
# Report: audited first-stage TTS trainer (accelerate): the mel reconstruction loss is gathered across processes and summed into running_loss with .item() for the log line; the validation sum loss_test is built under torch.no_grad()
# Shape: the same epoch-long running mean, but the gathered loss is turned into a Python float with .item() before it is added (as in the repository); the eval sum stays under no_grad
# Expect: near-miss: must be silent
import numpy as np
import torch

from utils import length_to_mask, log_norm, maximum_path, mask_from_lens


def clip_segments(asr, mels, waves, mel_input_length, max_len, device):
    mel_len = min([int(mel_input_length.min().item() / 2 - 1), max_len // 2])
    en, gt, wav = [], [], []
    for bib in range(len(mel_input_length)):
        mel_length = int(mel_input_length[bib].item() / 2)
        random_start = np.random.randint(0, mel_length - mel_len)
        en.append(asr[bib, :, random_start:random_start + mel_len])
        gt.append(mels[bib, :, (random_start * 2):((random_start + mel_len) * 2)])
        y = waves[bib][(random_start * 2) * 300:((random_start + mel_len) * 2) * 300]
        wav.append(torch.from_numpy(y).to(device))
    return torch.stack(en), torch.stack(gt).detach(), torch.stack(wav).float().detach()


def align(model, texts, input_lengths, mels, mel_input_length, n_down):
    mask = length_to_mask(mel_input_length // (2 ** n_down)).to(mels.device)
    text_mask = length_to_mask(input_lengths).to(texts.device)
    ppgs, s2s_pred, s2s_attn = model.text_aligner(mels, mask, texts)
    s2s_attn = s2s_attn.transpose(-1, -2)[..., 1:].transpose(-1, -2)
    with torch.no_grad():
        mask_ST = mask_from_lens(s2s_attn, input_lengths, mel_input_length // (2 ** n_down))
        s2s_attn_mono = maximum_path(s2s_attn, mask_ST)
    t_en = model.text_encoder(texts, input_lengths, text_mask)
    return t_en @ s2s_attn_mono


def train_epoch(epoch, model, optimizer, accelerator, train_dataloader, stft_loss, writer,
                iters, log_interval, max_len, n_down, device):
    running_loss = 0
    _ = [model[key].train() for key in model]
    for i, batch in enumerate(train_dataloader):
        waves = batch[0]
        texts, input_lengths, _, _, mels, mel_input_length, _ = [b.to(device) for b in batch[1:]]
        asr = align(model, texts, input_lengths, mels, mel_input_length, n_down)
        en, gt, wav = clip_segments(asr, mels, waves, mel_input_length, max_len, device)
        if gt.shape[-1] < 80:
            continue
        with torch.no_grad():
            real_norm = log_norm(gt.unsqueeze(1)).squeeze(1).detach()
            F0_real, _, _ = model.pitch_extractor(gt.unsqueeze(1))
        s = model.style_encoder(gt.unsqueeze(1))
        y_rec = model.decoder(en, F0_real, real_norm, s)

        optimizer.zero_grad()
        loss_mel = stft_loss(y_rec.squeeze(), wav.detach())
        running_loss += accelerator.gather(loss_mel).mean().item()
        accelerator.backward(loss_mel)
        for key in ('text_encoder', 'style_encoder', 'decoder'):
            optimizer.step(key)
        iters = iters + 1
        if (i + 1) % log_interval == 0 and accelerator.is_main_process:
            print('Epoch [%d], Step [%d], Mel Loss: %.5f' % (epoch + 1, i + 1, running_loss / (i + 1)))
            writer.add_scalar('train/mel_loss', running_loss / (i + 1), iters)
    return iters


def validate(epoch, model, accelerator, val_dataloader, stft_loss, writer, max_len, n_down, device):
    loss_test, iters_test = 0, 0
    _ = [model[key].eval() for key in model]
    with torch.no_grad():
        for batch_idx, batch in enumerate(val_dataloader):
            waves = batch[0]
            texts, input_lengths, _, _, mels, mel_input_length, _ = [b.to(device) for b in batch[1:]]
            asr = align(model, texts, input_lengths, mels, mel_input_length, n_down)
            en, gt, wav = clip_segments(asr, mels, waves, mel_input_length, max_len, device)
            F0_real, _, F0 = model.pitch_extractor(gt.unsqueeze(1))
            s = model.style_encoder(gt.unsqueeze(1))
            real_norm = log_norm(gt.unsqueeze(1)).squeeze(1)
            y_rec = model.decoder(en, F0_real, real_norm, s)
            loss_mel = stft_loss(y_rec.squeeze(), wav.detach())
            loss_test += accelerator.gather(loss_mel).mean().item()
            iters_test += 1
    writer.add_scalar('eval/mel_loss', loss_test / iters_test, epoch + 1)
    return loss_test / iters_test
