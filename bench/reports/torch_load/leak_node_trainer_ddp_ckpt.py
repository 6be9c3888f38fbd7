# Source: https://github.com/jakublala/coarsegrained-md-neural-ode/blob/009ea6929f2c09cf25edd62ddd4e7e6481abc3d7/diffmd/training.py
# Report: neural-ODE molecular-dynamics Trainer.load_func resumes from a checkpoint saved by a (possibly DDP) GPU run with torch.load(path) and no map_location, then strips the "module." prefixes
# Shape: a Trainer class whose load_func method reads the state dict without map_location before the model is moved; the loop feeds a RunningAverageMeter with loss.item() (a Python float)
# Expect: TML011 line 52
import re
from collections import OrderedDict

import torch
import torch.nn as nn
from torchdiffeq import odeint_adjoint


class RunningAverageMeter:
    def __init__(self, momentum=0.99):
        self.momentum = momentum
        self.reset()

    def reset(self):
        self.val, self.avg = None, 0.0
        self.losses, self.lrs = [], []

    def update(self, val, lr):
        self.avg = val if self.val is None else self.avg * self.momentum + val * (1 - self.momentum)
        self.val = val
        self.losses.append(val)
        self.lrs.append(lr)


class ODEFunc(nn.Module):
    def __init__(self, dim, width):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, width), nn.Tanh(), nn.Linear(width, dim))

    def forward(self, t, y):
        return self.net(y)


class Trainer:
    def __init__(self, config, train_loader):
        self.device = config["device"]
        self.load_folder = config.get("load_folder")
        self.epochs = config["epochs"]
        self.loader = train_loader
        self.func = ODEFunc(config["dim"], config["width"]).to(self.device)
        self.optimizer = torch.optim.Adam(self.func.parameters(), lr=config["lr"])
        self.loss_meter = RunningAverageMeter()
        if self.load_folder is not None:
            self.load_func()

    def load_func(self):
        # the checkpoint may come from a DistributedDataParallel run
        state_dict = torch.load(f"{self.load_folder}/model.pt")  # expect: TML011
        pattern = re.compile("module.")
        model_dict = OrderedDict()
        for k, v in state_dict.items():
            model_dict[re.sub(pattern, "", k)] = v
        self.func.load_state_dict(model_dict)

    def forward_pass(self, y0, t):
        pred = odeint_adjoint(self.func, y0.to(self.device), t.to(self.device), method="dopri5")
        return pred.transpose(0, 1)

    def train(self):
        for epoch in range(1, self.epochs + 1):
            for y0, t, target in self.loader:
                for p in self.func.parameters():
                    p.grad = None
                pred = self.forward_pass(y0, t[0])
                loss = torch.mean(torch.abs(pred - target.to(self.device)))
                loss.backward()
                self.loss_meter.update(loss.item(), self.optimizer.param_groups[0]["lr"])
                self.optimizer.step()
            print(f"epoch {epoch} running loss {self.loss_meter.avg:.5f}")
        return self.func, self.loss_meter

    def save(self, folder):
        torch.save(self.func.state_dict(), f"{folder}/model.pt")
