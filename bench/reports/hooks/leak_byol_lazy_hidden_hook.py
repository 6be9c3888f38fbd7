# Source: https://github.com/lucidrains/byol-pytorch/blob/master/byol_pytorch/byol_pytorch.py
# Report: BYOL NetWrapper registers its hidden-layer forward hook lazily from get_representation behind a hook_registered flag; leak = the lazy registration without the guard.
# Shape: get_representation runs on every forward (online and target, every step) and calls _register_hook each time; the handle is a discarded local, so the backbone layer collects one more bound-method hook per forward: per-step time and host memory grow without bound.
# Expect: TML007 line 47
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


def loss_fn(x, y):
    x, y = F.normalize(x, dim=-1), F.normalize(y, dim=-1)
    return 2 - 2 * (x * y).sum(dim=-1)


class EMA:
    def __init__(self, beta):
        self.beta = beta

    def update_average(self, old, new):
        return new if old is None else old * self.beta + (1 - self.beta) * new


def update_moving_average(ema_updater, ma_model, current_model):
    for current, ma in zip(current_model.parameters(), ma_model.parameters()):
        ma.data = ema_updater.update_average(ma.data, current.data)


def MLP(dim, out, hidden=4096):
    return nn.Sequential(nn.Linear(dim, hidden), nn.BatchNorm1d(hidden), nn.ReLU(inplace=True), nn.Linear(hidden, out))


class NetWrapper(nn.Module):
    def __init__(self, net, feat_dim, projection_size=256, layer=-2):
        super().__init__()
        self.net, self.layer = net, layer
        self.projector = MLP(feat_dim, projection_size)
        self.hidden = {}
        self.hook_registered = False

    def _hook(self, _, inputs, output):
        self.hidden[inputs[0].device] = torch.flatten(output, 1)

    def _register_hook(self):
        layer = [*self.net.children()][self.layer]
        handle = layer.register_forward_hook(self._hook)  # expect: TML007
        self.hook_registered = True

    def get_representation(self, x):
        self._register_hook()
        self.hidden.clear()
        _ = self.net(x)
        hidden = self.hidden[x.device]
        self.hidden.clear()
        return hidden

    def forward(self, x):
        return self.projector(self.get_representation(x))


class BYOL(nn.Module):
    def __init__(self, net, feat_dim, augment, projection_size=256, moving_average_decay=0.99):
        super().__init__()
        self.augment = augment
        self.online_encoder = NetWrapper(net, feat_dim, projection_size)
        self.online_predictor = MLP(projection_size, projection_size)
        self.target_encoder = None
        self.target_ema_updater = EMA(moving_average_decay)

    def _get_target_encoder(self):
        if self.target_encoder is None:
            self.target_encoder = copy.deepcopy(self.online_encoder)
            for p in self.target_encoder.parameters():
                p.requires_grad = False
        return self.target_encoder

    def update_moving_average(self):
        update_moving_average(self.target_ema_updater, self.target_encoder, self.online_encoder)

    def forward(self, x):
        one, two = self.augment(x), self.augment(x)
        pred_one = self.online_predictor(self.online_encoder(one))
        pred_two = self.online_predictor(self.online_encoder(two))
        with torch.no_grad():
            target_encoder = self._get_target_encoder()
            target_one, target_two = target_encoder(one), target_encoder(two)
        loss = loss_fn(pred_one, target_two.detach()) + loss_fn(pred_two, target_one.detach())
        return loss.mean()


def train(learner, loader, epochs, device):
    opt = torch.optim.Adam(learner.parameters(), lr=3e-4)
    for epoch in range(epochs):
        total = 0.0
        for images in loader:
            loss = learner(images.to(device))
            opt.zero_grad()
            loss.backward()
            opt.step()
            learner.update_moving_average()
            total += loss.item()
        print(f"epoch {epoch}: {total / len(loader):.4f}")
