# Source: https://github.com/Aoi-hosizora/FFDNet_pytorch/issues/4
# Report: CUDA OOM as soon as validation starts (after 5 epochs); the reporter fixed it by writing train_losses += float(train_loss) and val_losses += float(val_loss)
# Shape: per-epoch sums are bound before the batch x noise-level loops and += the raw MSE tensors; the validation pass after model.eval() also runs without no_grad, so every val graph is kept in val_losses
# Expect: TML001 lines 58, 83; TML003 line 81
import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader


def add_batch_noise(images, noise_sigma):
    noise = torch.randn_like(images) * noise_sigma
    return images + noise


class FFDNet(nn.Module):
    def __init__(self, is_gray):
        super().__init__()
        c = 1 if is_gray else 3
        self.body = nn.Sequential(
            nn.Conv2d(4 * c + 1, 96, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(96, 96, 3, padding=1), nn.BatchNorm2d(96), nn.ReLU(inplace=True),
            nn.Conv2d(96, 4 * c, 3, padding=1),
        )

    def forward(self, x, noise_sigma):
        down = nn.functional.pixel_unshuffle(x, 2)
        sigma_map = noise_sigma.view(-1, 1, 1, 1).expand(-1, 1, down.shape[2], down.shape[3])
        return nn.functional.pixel_shuffle(self.body(torch.cat([down, sigma_map], dim=1)), 2)


def train(args, train_dataset, val_dataset):
    train_dataloader = DataLoader(train_dataset, batch_size=args.batch_size, shuffle=True, num_workers=6)
    val_dataloader = DataLoader(val_dataset, batch_size=args.batch_size, shuffle=False, num_workers=6)
    train_noises = list(range(0, 75, 15))
    val_noises = list(range(0, 60, 30))

    model = FFDNet(is_gray=args.is_gray).cuda()
    loss_fn = nn.MSELoss(reduction='sum')
    optimizer = optim.Adam(model.parameters(), lr=args.learning_rate)

    for epoch_idx in range(args.epoches):
        loss_idx = 0
        train_losses = 0
        model.train()
        start_time = time.time()
        for batch_idx, batch_data in enumerate(train_dataloader):
            for int_noise_sigma in train_noises:
                noise_sigma = int_noise_sigma / 255
                new_images = add_batch_noise(batch_data, noise_sigma).cuda()
                sigma = torch.FloatTensor(np.array([noise_sigma] * new_images.shape[0])).cuda()

                images_pred = model(new_images, sigma)
                train_loss = loss_fn(images_pred, batch_data.to(images_pred.device))
                train_losses += train_loss  # expect: TML001
                loss_idx += 1

                optimizer.zero_grad()
                train_loss.backward()
                optimizer.step()
                print(f'\rEpoch: {epoch_idx + 1}, Batch: {batch_idx + 1}, Train_Loss: {train_loss}', end='')

        train_losses /= loss_idx
        print(f', Avg_Train_Loss: {train_losses}, All: {int(time.time() - start_time)}s')

        # Evaluate
        loss_idx = 0
        val_losses = 0
        if (epoch_idx + 1) % args.val_epoch != 0:
            continue
        model.eval()
        for batch_idx, batch_data in enumerate(val_dataloader):
            for int_noise_sigma in val_noises:
                noise_sigma = int_noise_sigma / 255
                new_images = add_batch_noise(batch_data, noise_sigma).cuda()
                sigma = torch.FloatTensor(np.array([noise_sigma] * new_images.shape[0])).cuda()

                images_pred = model(new_images, sigma)  # expect: TML003
                val_loss = loss_fn(images_pred, batch_data.to(images_pred.device))
                val_losses += val_loss  # expect: TML001
                loss_idx += 1
                print(f'\rEpoch: {epoch_idx + 1}, Batch: {batch_idx + 1}, Val_Loss: {val_loss}', end='')

        val_losses /= loss_idx
        print(f', Avg_Val_Loss: {val_losses}')

        # Save Checkpoint
        if (epoch_idx + 1) % args.save_checkpoints == 0:
            torch.save(model.state_dict(), args.model_path + 'net_checkpoint.pth')
