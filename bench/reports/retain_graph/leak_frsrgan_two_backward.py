# Source: https://github.com/ReNginx/FR-SRGAN/blob/07947ca812b67b8e7d05a82a19f82d888e6ba075/FRSRGAN_train.py
# Report: port of the FR-SRGAN step (repo issue #2: GPU memory keeps increasing while training): the generator backward also gets retain_graph=True and the old g_loss.data[0]/d_loss.data[0] logging is replaced by the raw tensors
# Shape: the last backward of the step retains the whole clip graph (G and D activations of every frame) and running_results, which lives for the epoch, sums g_loss/d_loss tensors, so every batch's retained graph stays reachable
# Expect: TML006 line 64; TML001 lines 67, 68
import torch
import torch.nn as nn
import torch.optim as optim


class FrameGenerator(nn.Module):
    """Stands in for FRVSR: a recurrent generator that keeps its previous HR estimate internally."""

    def __init__(self, scale=4):
        super().__init__()
        self.scale = scale
        self.body = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 3 * scale * scale, 3, padding=1))
        self.shuffle = nn.PixelShuffle(scale)

    def init_hidden(self, device):
        self.prev_hr = None

    def forward(self, lr_img):
        hr = self.shuffle(self.body(lr_img))
        lr_est = nn.functional.avg_pool2d(hr, self.scale)
        return hr, lr_est


class GeneratorLoss(nn.Module):
    def forward(self, fake_scr, fake_hr, hr_img, fake_lr, lr_img):
        adversarial = 1 - fake_scr
        return nn.functional.mse_loss(fake_hr, hr_img) + nn.functional.mse_loss(fake_lr, lr_img) + 1e-3 * adversarial


def train_epoch(netG, netD, train_loader, optimizerG, optimizerD, criterion, device):
    running_results = {"batch_sizes": 0, "d_loss": 0.0, "g_loss": 0.0}
    netG.train()
    netD.train()
    for data, target in train_loader:
        batch_size = data.size(0)
        running_results["batch_sizes"] += batch_size

        fake_hrs, fake_lrs, fake_scrs = [], [], []
        d_loss = 0
        netD.zero_grad()
        netG.init_hidden(device)
        for lr_img, hr_img in zip(data, target):
            lr_img, hr_img = lr_img.to(device), hr_img.to(device)
            fake_hr, fake_lr = netG(lr_img)
            real_out = netD(hr_img).mean()
            fake_out = netD(fake_hr).mean()
            fake_hrs.append(fake_hr)
            fake_lrs.append(fake_lr)
            fake_scrs.append(fake_out)
            d_loss += 1 - real_out + fake_out
        d_loss /= len(data)
        d_loss.backward(retain_graph=True)
        optimizerD.step()

        g_loss = 0
        netG.zero_grad()
        for fake_hr, fake_lr, fake_scr, hr_img, lr_img in zip(fake_hrs, fake_lrs, fake_scrs, target, data):
            g_loss += criterion(fake_scr, fake_hr, hr_img.to(device), fake_lr, lr_img.to(device))
        g_loss /= len(data)
        g_loss.backward(retain_graph=True)  # expect: TML006
        optimizerG.step()

        running_results["g_loss"] += g_loss * batch_size  # expect: TML001
        running_results["d_loss"] += d_loss * batch_size  # expect: TML001
    return running_results


def main(train_loader, num_epochs, device):
    netG = FrameGenerator().to(device)
    netD = nn.Sequential(nn.Conv2d(3, 64, 3, stride=2), nn.LeakyReLU(0.2), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(64, 1), nn.Sigmoid()).to(device)
    optimizerG = optim.Adam(netG.parameters())
    optimizerD = optim.Adam(netD.parameters())
    criterion = GeneratorLoss().to(device)
    for epoch in range(1, num_epochs + 1):
        stats = train_epoch(netG, netD, train_loader, optimizerG, optimizerD, criterion, device)
        print(epoch, stats["d_loss"] / stats["batch_sizes"], stats["g_loss"] / stats["batch_sizes"])
