# Source: https://github.com/jeongchanYu/Gradient-Aware-Loss-Function/blob/1fa2ae5832fb8880b7155d77fdb29401b14d2c26/model/MetricGAN_TD_FT-LOG-MAE/train.py
# Report: the speech-enhancement train() runs a per-epoch test pass after se_model.eval(); the repository wraps it in `with torch.no_grad()`, this variant drops that context
# Shape: after se_model.eval() the test forward runs with grad enabled and no backward, so every full-length utterance saves activations for a backward that never comes (peak per test item)
# Expect: TML003 line 56
import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F


def log_mae_loss(ref_mag, est_mag, eps, batch_size):
    return torch.sum(torch.abs(torch.log(ref_mag + eps) - torch.log(est_mag + eps))) / batch_size


def lsd(ref, est, window, fft_size):
    r = torch.stft(ref, fft_size, window=window, return_complex=True).abs() ** 2
    e = torch.stft(est, fft_size, window=window, return_complex=True).abs() ** 2
    return torch.mean(torch.sqrt(torch.mean((torch.log10(r + 1e-8) - torch.log10(e + 1e-8)) ** 2, dim=-2)))


def run(se_model, optimizer, train_loader, test_loader, epochs, device, num_gpus, rank,
        fft_size=512, eps=1e-7, batch_size=16):
    window = torch.hann_window(fft_size, device=device)
    for epoch in range(1, epochs + 1):
        se_model.train()
        train_loss = 0
        for i, (file_name, clean, noisy) in enumerate(train_loader):
            clean = clean.to(device, non_blocking=True)
            noisy = noisy.to(device, non_blocking=True)

            noisy_spec = torch.stft(noisy, fft_size, window=window, return_complex=True)
            noisy_log = torch.log1p(noisy_spec.abs())
            clean_mag_pred = torch.expm1(se_model(noisy_log))
            clean_mag = torch.stft(clean, fft_size, window=window, return_complex=True).abs()
            loss = log_mae_loss(clean_mag, clean_mag_pred, eps, batch_size)

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            if num_gpus > 1:
                dist.all_reduce(loss)
            if rank == 0:
                train_loss += np.array([loss.item(), ])
        train_loss /= len(train_loader)

        se_model.eval()
        test_loss = 0
        for i, (file_name, clean, noisy) in enumerate(test_loader):
            clean = clean.to(device, non_blocking=True)
            noisy = noisy.to(device, non_blocking=True)
            pad_len = (fft_size - (noisy.shape[1] % fft_size)) % fft_size
            noisy_pad = F.pad(noisy, (fft_size, pad_len + fft_size))

            spec = torch.stft(noisy_pad, fft_size, window=window, return_complex=True)
            clean_log_pred = se_model(torch.log1p(spec.abs()))  # expect: TML003
            est_spec = torch.polar(torch.expm1(clean_log_pred), spec.angle())
            clean_pred = torch.istft(est_spec, fft_size, window=window)[:, fft_size:fft_size + noisy.shape[1]]

            lsd_ = lsd(clean[:, :clean_pred.shape[1]], clean_pred, window, fft_size)
            if num_gpus > 1:
                dist.all_reduce(lsd_)
            if rank == 0:
                test_loss += np.array([lsd_.item(), ])
        test_loss /= len(test_loader)

        if rank == 0:
            print(f"epoch {epoch}: train {train_loss[0]:.4e} test lsd {test_loss[0]:.4f}")
            torch.save({"se_model": se_model.state_dict()}, f"./checkpoint/se_{epoch}.pth")
