# Source: https://github.com/ksw0306/ClariNet/blob/191e766898af6c48ceb1368b223149538cd6abb2/train.py
# Report: ClariNet (WaveNet teacher) keeps an exponential moving average of the weights: ExponentialMovingAverage.update does shadow -= (1 - decay) * (shadow - x) after every optimizer step, and the training loop feeds it param.data
# Shape: as in the repository: the loop passes param.data, so the shadow update is plain tensor arithmetic with no autograd history; the shadow dict is updated in place and never grows
# Expect: near-miss: must be silent
import gc

import torch
import torch.nn as nn
from torch import optim


class ExponentialMovingAverage(object):
    def __init__(self, decay):
        self.decay = decay
        self.shadow = {}

    def register(self, name, val):
        self.shadow[name] = val.clone()

    def update(self, name, x):
        assert name in self.shadow
        update_delta = self.shadow[name] - x
        self.shadow[name] -= (1.0 - self.decay) * update_delta


def register_model_to_ema(model, ema):
    for name, param in model.named_parameters():
        if param.requires_grad:
            ema.register(name, param.data)


def train(epoch, model, optimizer, ema, criterion, train_loader, device, state):
    global global_step
    epoch_loss = 0.
    running_loss = 0.
    model.train()
    display_step = 100
    for batch_idx, (x, y, c, _) in enumerate(train_loader):
        global_step += 1
        if global_step in (200000, 400000, 600000):
            for param_group in optimizer.param_groups:
                param_group['lr'] *= 0.5
                state['learning_rate'] = param_group['lr']
        x, y, c = x.to(device), y.to(device), c.to(device)

        optimizer.zero_grad()
        y_hat = model(x, c)
        loss = criterion(y_hat[:, :, :-1], y[:, 1:, :], size_average=True)
        loss.backward()

        nn.utils.clip_grad_norm_(model.parameters(), 10.)
        optimizer.step()
        if ema is not None:
            for name, param in model.named_parameters():
                if name in ema.shadow:
                    ema.update(name, param.data)

        running_loss += loss.item() / display_step
        epoch_loss += loss.item()
        if (batch_idx + 1) % display_step == 0:
            print('Global Step : {}, [{}, {}] loss : {:.4f}'.format(global_step, epoch, batch_idx + 1, running_loss))
            running_loss = 0.
        del y_hat, x, y, c, loss
    gc.collect()
    return epoch_loss / len(train_loader)


def main(model, criterion, train_loader, device, args):
    global global_step
    global_step = 0
    optimizer = optim.Adam(model.parameters(), lr=args.learning_rate)
    ema = ExponentialMovingAverage(args.ema_decay)
    register_model_to_ema(model, ema)
    state = {k: v for k, v in args._get_kwargs()}
    for epoch in range(1, args.epochs + 1):
        state['training_loss'] = train(epoch, model, optimizer, ema, criterion, train_loader, device, state)
        torch.save({name: t for name, t in ema.shadow.items()}, f'ema_epoch{epoch}.pth')
