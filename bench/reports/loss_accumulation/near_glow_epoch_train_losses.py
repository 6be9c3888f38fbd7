# Source: https://github.com/rosinality/glow-pytorch/blob/00039e6f4e98deb29c7c0aab9a97c133ee569806/train.py
# Report: Glow trainer collects the per-batch NLL (from the calc_loss helper) in train_losses, reset once per epoch, and writes the epoch mean to a file; the repo appends loss.item() right after optimizer.step()
# Shape: loss returned by the calc_loss helper is graph-attached, but only loss.item() (a Python float) is kept in train_losses; validation runs under torch.no_grad() and keeps .item() values too
# Expect: near-miss: must be silent
from math import log

import torch
from torchvision import utils


def calc_loss(log_p, logdet, image_size, n_bins, n_channels=3):
    n_pixel = image_size * image_size * n_channels
    loss = -log(n_bins) * n_pixel
    loss = loss + logdet + log_p
    return (
        (-loss / (log(2) * n_pixel)).mean(),
        (log_p / (log(2) * n_pixel)).mean(),
        (logdet / (log(2) * n_pixel)).mean(),
    )


def train(args, model, optimizer, dataset_f, z_sample, device, f_train_loss, f_test_loss):
    n_bins = 2.0 ** args.n_bits
    for i in range(args.epochs):
        train_loader, val_loader = dataset_f(args.batch, args.img_size, args.n_channels)
        train_losses = []
        for image in train_loader:
            if isinstance(image, list):
                image = image[0]
            optimizer.zero_grad()
            image = image.to(device)
            noisy_image = image + torch.rand_like(image) / n_bins
            log_p, logdet, _ = model(noisy_image)
            logdet = logdet.mean()
            loss, log_p, log_det = calc_loss(log_p, logdet, args.img_size, n_bins, args.n_channels)
            loss.backward()
            optimizer.step()
            train_losses.append(loss.item())
        current_train_loss = sum(train_losses) / len(train_losses)
        print(f"{current_train_loss},{i + 1}", file=f_train_loss)

        with torch.no_grad():
            utils.save_image(
                model.reverse(z_sample).cpu().data,
                f"sample/sample_{str(i + 1).zfill(6)}.png",
                normalize=True,
                nrow=10,
            )
            losses = []
            for image in val_loader:
                if isinstance(image, list):
                    image = image[0]
                image = image.to(device)
                log_p, logdet, _ = model(image)
                logdet = logdet.mean()
                loss, log_p, log_det = calc_loss(log_p, logdet, args.img_size, n_bins, args.n_channels)
                losses.append(loss.item())
            print(f"{sum(losses) / len(losses)},{i + 1}", file=f_test_loss)
        torch.save(model.state_dict(), f"checkpoint/model_{str(i + 1).zfill(3)}.pt")
