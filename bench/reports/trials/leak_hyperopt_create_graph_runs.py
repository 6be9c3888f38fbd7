# Source: https://github.com/kach/gradient-descent-the-ultimate-optimizer/pull/1
# Report: training several hyperoptimized models one after another leaks ~10 MiB per run: backward(create_graph=True) leaves param<->grad cycles alive after each run
# Shape: one trial per config, each trains a fresh ModuleWrapper with backward(create_graph=True); the .grad fields are never reset to None when the run ends
# Expect: TML013 line 48
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import gradient_descent_the_ultimate_optimizer as gdtuo

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class MLP(nn.Module):
    def __init__(self, num_inp, num_hid, num_out):
        super().__init__()
        self.layer1 = nn.Linear(num_inp, num_hid)
        self.layer2 = nn.Linear(num_hid, num_out)

    def initialize(self):
        nn.init.kaiming_uniform_(self.layer1.weight, a=math.sqrt(5))
        nn.init.kaiming_uniform_(self.layer2.weight, a=math.sqrt(5))

    def forward(self, x):
        x = torch.tanh(self.layer1(x))
        x = torch.tanh(self.layer2(x))
        return F.log_softmax(x, dim=1)


def build(cfg):
    model = MLP(28 * 28, cfg["hidden"], 10)
    opt = gdtuo.Adam(alpha=cfg["alpha"], optimizer=gdtuo.SGD(cfg["hyper_lr"]))
    mw = gdtuo.ModuleWrapper(model, optimizer=opt)
    mw.initialize()
    return model.to(DEVICE), mw


def run_trial(cfg, dl_train, epochs=3):
    model, mw = build(cfg)
    for epoch in range(epochs):
        running = 0.0
        for feats, labels in dl_train:
            mw.begin()
            feats, labels = feats.view(-1, 28 * 28).to(DEVICE), labels.to(DEVICE)
            loss = F.nll_loss(mw.forward(feats), labels)
            mw.zero_grad()
            loss.backward(create_graph=True)  # expect: TML013
            mw.step()
            running += loss.item() * feats.size(0)
    return running / len(dl_train.dataset)


def sweep(configs, dl_train):
    results = {}
    for i, cfg in enumerate(configs):
        results[i] = (cfg, run_trial(cfg, dl_train))
        print(f"trial {i}: {cfg} -> {results[i][1]:.4f}")
    return min(results.values(), key=lambda r: r[1])
