# Source: https://github.com/xiaoyiming1999/Calibration_for_RMFD/blob/main/utils/train_ensemble.py
# Report: after fitting the temperature, the ensemble's test pass runs the five models with autograd on and appends every batch's (graph-attached) ensemble output and its CUDA labels to lists used for ECE/NLL/Brier
# Shape: models are in eval mode, the test loop has no no_grad; all_outputs keeps each batch's mean logits and with them every model's saved activations until the loop ends
# Expect: TML003 line 102; TML001 line 110; TML004 line 111
import logging

import torch
from torch import nn, optim


def Mix_max_process(x):
    x_min = x.amin(dim=-1, keepdim=True)
    x_max = x.amax(dim=-1, keepdim=True)
    return 2 * (x - x_min) / (x_max - x_min + 1e-8) - 1


def fgsm_attack(inputs, epsilon, data_grad):
    return Mix_max_process(inputs + epsilon * data_grad.sign())


class TemperatureScaling(nn.Module):
    def __init__(self):
        super().__init__()
        self.temperature = nn.Parameter(torch.ones(1) * 1.5)

    def forward(self, logits):
        return logits / self.temperature.unsqueeze(1).expand(logits.size(0), logits.size(1))


class TrainEnsembleUtils(object):
    def __init__(self, args, models, dataloaders, ece_loss):
        self.args = args
        self.device = torch.device("cuda")
        self.models = [m.to(self.device) for m in models]
        self.optimizers = [optim.Adam(m.parameters(), lr=args.lr) for m in self.models]
        self.dataloaders = dataloaders
        self.criterion = nn.CrossEntropyLoss()
        self.ece_loss = ece_loss
        self.temperature = None

    def train_epoch(self):
        for model in self.models:
            model.train()
        for inputs, labels in self.dataloaders["train"]:
            inputs = Mix_max_process(inputs.to(self.device)).to(torch.float32)
            labels = labels.to(self.device)
            inputs.requires_grad = True
            for idx, model in enumerate(self.models):
                outputs = model(inputs)
                loss = self.criterion(outputs, labels)
                self.optimizers[idx].zero_grad()
                loss.backward(retain_graph=True)
                perturbed = fgsm_attack(inputs, 0.001, inputs.grad.data)
                loss = loss + self.criterion(model(perturbed), labels)
                self.optimizers[idx].zero_grad()
                loss.backward()
                self.optimizers[idx].step()

    @torch.no_grad()
    def collect_val_logits(self):
        for model in self.models:
            model.eval()
        outs, labs = [], []
        for inputs, labels in self.dataloaders["val"]:
            inputs = Mix_max_process(inputs.to(self.device)).to(torch.float32)
            outputs = torch.stack([model(inputs) for model in self.models], dim=0).mean(dim=0)
            outs.append(outputs.cpu())
            labs.append(labels)
        return torch.cat(outs).to(self.device), torch.cat(labs).to(self.device)

    def fit_temperature(self, val_outputs, val_labels):
        self.temperature = TemperatureScaling().to(self.device)
        optimizer = optim.LBFGS(self.temperature.parameters(), lr=0.001, max_iter=1000)

        def closure():
            optimizer.zero_grad()
            loss = self.criterion(self.temperature(val_outputs), val_labels)
            loss.backward()
            return loss

        optimizer.step(closure)

    def train(self):
        for epoch in range(self.args.epoch):
            logging.info("Epoch {}/{}".format(epoch, self.args.epoch - 1))
            self.train_epoch()
        if self.args.use_temperature:
            val_outputs, val_labels = self.collect_val_logits()
            self.fit_temperature(val_outputs, val_labels)
        return self.test()

    def test(self):
        for model in self.models:
            model.eval()
        acc = 0.0
        num_test_samples = 0
        all_outputs = []
        all_labels = []
        for inputs, labels in self.dataloaders["test"]:
            inputs = Mix_max_process(inputs.to(self.device)).to(torch.float32)
            labels = labels.to(self.device)
            outputs = torch.stack([model(inputs) for model in self.models], dim=0)  # expect: TML003
            outputs = torch.mean(outputs, dim=0)
            if self.temperature is not None:
                outputs = self.temperature(outputs)
            pred = outputs.argmax(dim=1)
            correct = torch.eq(pred, labels).float().sum().item()
            acc += correct
            num_test_samples += labels.size(0)
            all_outputs.append(outputs)  # expect: TML001
            all_labels.append(labels)  # expect: TML004
        all_outputs = torch.cat(all_outputs)
        all_labels = torch.cat(all_labels)
        ece = self.ece_loss(all_outputs, all_labels).item()
        nll = self.criterion(all_outputs, all_labels).item()
        acc = acc / num_test_samples
        logging.info("test-ACC: {:4f}, test-ECE: {:.4f}, test-NLL: {:.4f}".format(acc, ece, nll))
        return acc, ece, nll
