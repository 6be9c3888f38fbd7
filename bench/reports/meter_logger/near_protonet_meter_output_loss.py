# Source: https://github.com/jakesnell/prototypical-networks/blob/b4ff043225dfd9fa687bfae174540beb7ea1e25f/protonets/models/few_shot.py
# Report: Prototypical Networks (few-shot): Protonet.loss returns (loss_val, {'loss': loss_val.item(), 'acc': acc_val.item()}) and the train script's on_update hook feeds that dict into torchnet AverageValueMeters kept for the whole epoch. (evaluate() is wrapped in no_grad in both files; the repo's evaluate has none)
# Shape: as in the repo: the output dict holds Python floats (.item() inside Protonet.loss), so the meters' sum/var accumulation in on_update keeps no graph; evaluation runs under no_grad.
# Expect: near-miss: must be silent
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def euclidean_dist(x, y):
    n, m, d = x.size(0), y.size(0), x.size(1)
    x = x.unsqueeze(1).expand(n, m, d)
    y = y.unsqueeze(0).expand(n, m, d)
    return torch.pow(x - y, 2).sum(2)


class AverageValueMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.n, self.sum, self.var = 0, 0.0, 0.0
        self.mean, self.std = math.nan, math.nan

    def add(self, value, n=1):
        self.sum += value
        self.var += value * value
        self.n += n
        self.mean = self.sum / self.n

    def value(self):
        return float(self.mean), float(self.std)


class Protonet(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def loss(self, sample):
        xs, xq = sample["xs"], sample["xq"]
        n_class, n_support, n_query = xs.size(0), xs.size(1), xq.size(1)
        target_inds = torch.arange(0, n_class).view(n_class, 1, 1).expand(n_class, n_query, 1).long()
        if xq.is_cuda:
            target_inds = target_inds.cuda()
        x = torch.cat([xs.view(n_class * n_support, *xs.size()[2:]),
                       xq.view(n_class * n_query, *xq.size()[2:])], 0)
        z = self.encoder(x)
        z_proto = z[:n_class * n_support].view(n_class, n_support, z.size(-1)).mean(1)
        zq = z[n_class * n_support:]
        log_p_y = F.log_softmax(-euclidean_dist(zq, z_proto), dim=1).view(n_class, n_query, -1)
        loss_val = -log_p_y.gather(2, target_inds).squeeze().view(-1).mean()
        _, y_hat = log_p_y.max(2)
        acc_val = torch.eq(y_hat, target_inds.squeeze()).float().mean()
        return loss_val, {"loss": loss_val.item(), "acc": acc_val.item()}


class Engine:
    def __init__(self):
        names = ["on_start", "on_start_epoch", "on_forward", "on_update", "on_end_epoch"]
        self.hooks = {name: (lambda state: None) for name in names}

    def train(self, model, loader, optim_method, optim_config, max_epoch):
        state = {"model": model, "loader": loader, "epoch": 0, "t": 0, "stop": False,
                 "max_epoch": max_epoch}
        state["optimizer"] = optim_method(model.parameters(), **optim_config)
        self.hooks["on_start"](state)
        while state["epoch"] < state["max_epoch"] and not state["stop"]:
            state["model"].train()
            self.hooks["on_start_epoch"](state)
            for sample in state["loader"]:
                state["sample"] = sample
                state["optimizer"].zero_grad()
                loss, state["output"] = state["model"].loss(sample)
                self.hooks["on_forward"](state)
                loss.backward()
                state["optimizer"].step()
                state["t"] += 1
                self.hooks["on_update"](state)
            state["epoch"] += 1
            self.hooks["on_end_epoch"](state)


def evaluate(model, data_loader, meters):
    model.eval()
    for meter in meters.values():
        meter.reset()
    with torch.no_grad():
        for sample in data_loader:
            _, output = model.loss(sample)
            for field, meter in meters.items():
                meter.add(output[field])
    return meters


def main(model, train_loader, val_loader, fields=("loss", "acc"), epochs=100):
    model.cuda()
    engine = Engine()
    meters = {"train": {f: AverageValueMeter() for f in fields},
              "val": {f: AverageValueMeter() for f in fields}}

    def on_start(state):
        state["scheduler"] = torch.optim.lr_scheduler.StepLR(state["optimizer"], 20, gamma=0.5)
    engine.hooks["on_start"] = on_start

    def on_start_epoch(state):
        for split_meters in meters.values():
            for meter in split_meters.values():
                meter.reset()
        state["scheduler"].step()
    engine.hooks["on_start_epoch"] = on_start_epoch

    def on_update(state):
        for field, meter in meters["train"].items():
            meter.add(state["output"][field])
    engine.hooks["on_update"] = on_update

    def on_end_epoch(state):
        evaluate(state["model"], val_loader, meters["val"])
        print(f"Epoch {state['epoch']:02d}: train loss {meters['train']['loss'].value()[0]:.4f} "
              f"val loss {meters['val']['loss'].value()[0]:.4f}")
    engine.hooks["on_end_epoch"] = on_end_epoch

    engine.train(model=model, loader=train_loader, optim_method=torch.optim.Adam,
                 optim_config={"lr": 1e-3, "weight_decay": 0.0}, max_epoch=epochs)
