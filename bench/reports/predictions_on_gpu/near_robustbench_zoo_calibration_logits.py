# Source: https://github.com/RobustBench/robustbench/blob/7e188f749a3c01c3ad6f575b2a07c093102d92af/robustbench/eval/calibration.py
# Report: RobustBench's calibration harness loops over every model of the zoo, scores clean accuracy, then collects the test-subset logits with get_logits() for ECE and temperature search; here each batch is moved to the host as it is collected
# Shape: inside no_grad, logits_all.append(logits.cpu()) keeps host copies only; the list is concatenated once after the loop and moved to the device in one piece for the ECE computation
# Expect: near-miss: must be silent
import json
import math
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from robustbench.data import load_clean_dataset
from robustbench.model_zoo.models import model_dicts
from robustbench.utils import load_model


class ECELoss(nn.Module):
    def __init__(self, n_bins=15):
        super().__init__()
        bin_boundaries = torch.linspace(0, 1, n_bins + 1)
        self.bin_lowers = bin_boundaries[:-1]
        self.bin_uppers = bin_boundaries[1:]

    def forward(self, logits, labels):
        confidences, predictions = torch.max(F.softmax(logits, dim=1), 1)
        accuracies = predictions.eq(labels)
        ece = torch.zeros(1, device=logits.device)
        for bin_lower, bin_upper in zip(self.bin_lowers, self.bin_uppers):
            in_bin = confidences.gt(bin_lower.item()) * confidences.le(bin_upper.item())
            prop_in_bin = in_bin.float().mean()
            if prop_in_bin.item() > 0:
                ece += torch.abs(confidences[in_bin].mean() - accuracies[in_bin].float().mean()) * prop_in_bin
        return ece


def clean_accuracy(model, x, y, batch_size=100, device=None):
    acc = 0.0
    n_batches = math.ceil(x.shape[0] / batch_size)
    with torch.no_grad():
        for counter in range(n_batches):
            x_curr = x[counter * batch_size:(counter + 1) * batch_size].to(device)
            y_curr = y[counter * batch_size:(counter + 1) * batch_size].to(device)
            output = model(x_curr)
            acc += (output.max(1)[1] == y_curr).float().sum()
    return acc.item() / x.shape[0]


def get_logits(model, x, batch_size, device):
    n_batches = math.ceil(x.shape[0] / batch_size)
    logits_all = []
    with torch.no_grad():
        for counter in range(n_batches):
            x_curr = x[counter * batch_size:(counter + 1) * batch_size].to(device)
            logits = model(x_curr)
            logits_all.append(logits.cpu())
    return torch.cat(logits_all).to(device)


def temperature_calibration(logits, y_test, ece_criterion, step=0.001):
    grid = np.arange(0.001, 1.0, step)
    grid = np.concatenate([grid, 1 / grid])
    ece_opt, t_opt = ece_criterion(logits, y_test).item(), 1.0
    for temperature in grid:
        ece = ece_criterion(logits / temperature, y_test).item()
        if ece < ece_opt:
            ece_opt, t_opt = ece, temperature
    return t_opt


def compute_calibration(n_ex=1000, batch_size=256):
    device = torch.device("cuda")
    ece_criterion = ECELoss().cuda()
    stats = {"model": [], "acc": [], "ece": [], "ece_t": [], "t_opt": []}
    for dataset, dataset_dict in model_dicts.items():
        x_test, y_test = load_clean_dataset(dataset, n_ex, data_dir="./data")
        for threat_model, threat_model_dict in dataset_dict.items():
            for model_name in list(threat_model_dict.keys()):
                model = load_model(model_name, "./models", dataset, threat_model).to(device)
                acc = clean_accuracy(model, x_test, y_test, batch_size=batch_size, device=device)
                logits = get_logits(model, x_test, batch_size, device)
                ece = ece_criterion(logits, y_test.to(device)).item()
                t_opt = temperature_calibration(logits, y_test.to(device), ece_criterion)
                ece_t = ece_criterion(logits / t_opt, y_test.to(device)).item()
                stats["model"].append(model_name)
                stats["acc"].append(acc)
                stats["ece"].append(ece)
                stats["ece_t"].append(ece_t)
                stats["t_opt"].append(t_opt)
    np.save("model_info/calibration_stats.npy", {k: np.array(v) for k, v in stats.items()})


if __name__ == "__main__":
    compute_calibration()
