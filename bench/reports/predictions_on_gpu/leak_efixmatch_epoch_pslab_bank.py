# Source: https://github.com/iBelieveCJM/Tricks-of-Semi-supervisedDeepLeanring-Pytorch/blob/be90060b3017e99b8c53a596110cb5931ec9f38c/trainer/eFixMatch.py
# Report: audited code (and issue https://github.com/iBelieveCJM/Tricks-of-Semi-supervisedDeepLeanring-Pytorch/issues/4): eFixMatch keeps "epoch pseudo labels" in GPU tensors self.epoch_pslab / self.epoch_probs and writes each weak-augmented batch's confidences into them under torch.no_grad() with .detach(); this rewrite does the write without either.
# Shape: the confidence bank lives on self for the whole run; self.epoch_probs[udx] = wprobs writes a graph-attached slice into it, so the bank's IndexPutBackward chain pins every weak forward's activations.
# Expect: TML001 line 63
import torch
from torch.nn import functional as F
from collections import defaultdict
from itertools import cycle

from utils.data_utils import NO_LABEL


class Trainer:

    def __init__(self, model, ema_model, optimizer, device, config):
        self.model = model
        self.ema_model = ema_model
        self.optimizer = optimizer
        self.lce_loss = torch.nn.CrossEntropyLoss(ignore_index=NO_LABEL)
        self.uce_loss = torch.nn.CrossEntropyLoss(reduction='none')
        self.usp_weight = config.usp_weight
        self.threshold = config.threshold
        self.ema_decay = config.ema_decay
        self.device = device
        self.global_step = 0

    def create_pslab(self, n_samples, n_classes):
        pslab = torch.randint(0, n_classes, (n_samples,))
        probs = torch.ones(n_samples)
        return pslab.long().to(self.device), probs.to(self.device)

    def update_ema(self, model, ema_model, alpha, global_step):
        alpha = min(1 - 1 / (global_step + 1), alpha)
        for ema_param, param in zip(ema_model.parameters(), model.parameters()):
            ema_param.data.mul_(alpha).add_(param.data, alpha=1 - alpha)

    def train_iteration(self, label_loader, unlab_loader):
        loop_info = defaultdict(list)
        for ((x1, _), label_y, _), ((wu, su), unlab_y, udx) in zip(cycle(label_loader), unlab_loader):
            self.global_step += 1
            label_x, weak_u, strong_u = x1.to(self.device), wu.to(self.device), su.to(self.device)
            label_y = label_y.to(self.device)

            ##=== forward ===
            outputs = self.model(label_x)
            loss = self.lce_loss(outputs, label_y)
            loop_info['lloss'].append(loss.item())

            ##=== semi-supervised training ===
            self.update_ema(self.model, self.ema_model, self.ema_decay, self.global_step)
            wepslab = self.epoch_pslab[udx]
            weprobs = self.epoch_probs[udx]
            mask = weprobs.ge(self.threshold).float()
            soutputs = self.model(strong_u)
            uloss = torch.mean(mask * self.uce_loss(soutputs, wepslab))
            uloss *= self.usp_weight
            loss += uloss
            loop_info['uloss'].append(uloss.item())
            ## use the outputs of weak unlabeled data as pseudo labels for the next epoch
            woutputs = F.softmax(self.model(weak_u), 1)
            wprobs, wpslab = woutputs.max(1)
            self.epoch_pslab[udx] = wpslab
            self.epoch_probs[udx] = wprobs  # expect: TML001

            ##=== backward ===
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            loop_info['lacc'].append(label_y.eq(outputs.max(1)[1]).float().sum().item())
        return loop_info

    def train(self, label_loader, unlab_loader):
        self.model.train()
        self.ema_model.train()
        with torch.enable_grad():
            return self.train_iteration(label_loader, unlab_loader)

    def loop(self, epochs, label_data, unlab_data):
        self.epoch_pslab, self.epoch_probs = self.create_pslab(
            n_samples=len(unlab_data.dataset),
            n_classes=unlab_data.dataset.num_classes)
        for ep in range(epochs):
            info = self.train(label_data, unlab_data)
            print(f">>>[train] epoch {ep} lloss {sum(info['lloss']) / len(info['lloss']):.4f}")
