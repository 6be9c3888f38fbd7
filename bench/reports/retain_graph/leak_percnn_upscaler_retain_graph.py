# Source: https://github.com/isds-neu/PeRCNN/issues/3
# Report: A user asks why PeRCNN trains with loss.backward(retain_graph=True) and whether it causes GPU memory explosion and slower training.
# Shape: like the repo's pretrain_upscaler, each epoch builds a fresh graph from Upconv(init_state_low) and calls backward(retain_graph=True) although nothing backprops through it again; the saved buffers are kept alive until the next epoch rebinds `loss`, raising peak memory (not an unbounded per-iteration growth).
# Expect: TML006 line 36
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR


class UpscaleConv(nn.Module):
    def __init__(self, channels=2, hidden=16):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, hidden, 3, padding=1)
        self.conv2 = nn.Conv2d(hidden, channels * 4, 3, padding=1)
        self.shuffle = nn.PixelShuffle(2)

    def forward(self, x):
        return self.shuffle(self.conv2(torch.tanh(self.conv1(x))))


def pretrain_upscaler(upconv, init_state_low, n_epochs=4000):
    padded = torch.cat((init_state_low, init_state_low[:, :, :, 0:1]), dim=3)
    padded = torch.cat((padded, padded[:, :, 0:1, :]), dim=2)
    target = F.interpolate(padded, (101, 101), mode="bicubic", align_corners=True)
    target = target[:, :, :-1, :-1]

    optimizer = optim.Adam(upconv.parameters(), lr=0.02)
    scheduler = StepLR(optimizer, step_size=100, gamma=0.97)
    mse_loss = nn.MSELoss()
    for epoch in range(n_epochs):
        optimizer.zero_grad()
        init_state_pred = upconv(init_state_low)
        loss = mse_loss(init_state_pred, target)
        loss.backward(retain_graph=True)  # expect: TML006
        print("[%d] loss: %.9f" % (epoch + 1, loss.item()))
        optimizer.step()
        scheduler.step()
    return upconv


if __name__ == "__main__":
    low = torch.randn(1, 2, 50, 50, device="cuda")
    pretrain_upscaler(UpscaleConv().cuda(), low, n_epochs=200)
