# Source: https://github.com/DealLateNoDoubt/Diffusion_UNetImprove/blob/90d8ee5b080a1b94cf1686a8fb9867cd969b668d/utils/ema.py
# Report: latent-diffusion UNet trainer (train.py) calls ema.Update() after every optimizer step; the EMA helper blends param.data into a shadow dict, and the EMA validation loss runs under torch.no_grad()
# Shape: new_average is built from param.data (no graph) and the previous shadow, so self.shadow[name] stays a plain tensor across steps; the per-step loss is kept as loss.item()
# Expect: near-miss: must be silent
import torch
import torch.nn as nn

DEVICE = "cuda"


class EMA(object):
    def __init__(self, model, decay):
        self.model = model
        self.decay = decay
        self.shadow = {}
        self.backup = {}

    def Register(self):
        for name, param in self.model.named_parameters():
            if param.requires_grad:
                self.shadow[name] = param.data.clone()

    def Update(self):
        for name, param in self.model.named_parameters():
            if param.requires_grad:
                assert name in self.shadow
                new_average = (1.0 - self.decay) * param.data + self.decay * self.shadow[name]
                self.shadow[name] = new_average.clone()

    def Apply_shadow(self):
        for name, param in self.model.named_parameters():
            if param.requires_grad:
                self.backup[name] = param.data
                param.data = self.shadow[name]

    def Restore(self):
        for name, param in self.model.named_parameters():
            if param.requires_grad:
                param.data = self.backup[name]
        self.backup = {}


def val_loss(unet, ema, val_loader, loss_fn, total_step, count=30):
    ema.Apply_shadow()
    with torch.no_grad():
        ema_loss = 0.
        for c, (x_t, t, noise) in enumerate(val_loader, start=1):
            x_t, t, noise = x_t.float().to(DEVICE), t.float().to(DEVICE), noise.float().to(DEVICE)
            n_ = unet(x_t, t / total_step)
            ema_loss += loss_fn(n_, noise).item()
            if c == count:
                break
    ema.Restore()
    return ema_loss / c


def train(unet, train_loader, val_loader, opt):
    ema = EMA(unet, opt.ema_rate)
    ema.Register()
    loss_fn = nn.MSELoss()
    optimizer = torch.optim.AdamW(unet.parameters(), lr=opt.learning_rate)
    for epoch in range(opt.start_epoch, opt.epochs):
        epoch_loss = 0
        for x_t, t, noise in train_loader:
            x_t, t, noise = x_t.float().to(DEVICE), t.float().to(DEVICE), noise.float().to(DEVICE)
            n_ = unet(x_t, t / opt.total_step)
            loss = loss_fn(n_, noise)
            epoch_loss += loss.item()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(unet.parameters(), opt.clip_grad_norm)
            optimizer.step()
            ema.Update()
            optimizer.zero_grad()
        print(epoch, epoch_loss / len(train_loader), val_loss(unet, ema, val_loader, loss_fn, opt.total_step))
