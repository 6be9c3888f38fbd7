# Source: https://github.com/kan-bayashi/ParallelWaveGAN/pull/26
# Report: GAN vocoder trainer ran OOM as soon as the periodic evaluation started (step 1000): _eval_step ran generator and discriminator without torch.no_grad
# Shape: the fix: _eval_step (called per dev batch from _eval_epoch after model[key].eval()) is decorated with @torch.no_grad(); losses folded into a dict with .item()
# Expect: near-miss: must be silent
from collections import defaultdict

import torch
from tqdm import tqdm


class Trainer:
    def __init__(self, data_loader, model, criterion, optimizer, config, device):
        self.data_loader = data_loader
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.config = config
        self.device = device
        self.steps = 0
        self.total_train_loss = defaultdict(float)
        self.total_eval_loss = defaultdict(float)

    def _train_step(self, batch):
        x, y = batch
        x = tuple(x_.to(self.device) for x_ in x)
        y = y.to(self.device)
        y_ = self.model["generator"](*x)
        sc_loss, mag_loss = self.criterion["stft"](y_.squeeze(1), y.squeeze(1))
        gen_loss = sc_loss + mag_loss
        if self.steps > self.config["discriminator_train_start_steps"]:
            p_ = self.model["discriminator"](y_)
            adv_loss = self.criterion["mse"](p_, p_.new_ones(p_.size()))
            gen_loss = gen_loss + self.config["lambda_adv"] * adv_loss
            self.total_train_loss["train/adversarial_loss"] += adv_loss.item()
        self.total_train_loss["train/generator_loss"] += gen_loss.item()
        self.optimizer["generator"].zero_grad()
        gen_loss.backward()
        self.optimizer["generator"].step()
        self.steps += 1

    def _eval_epoch(self):
        for key in self.model.keys():
            self.model[key].eval()
        for eval_steps, batch in enumerate(tqdm(self.data_loader["dev"]), 1):
            self._eval_step(batch)
        for key in self.total_eval_loss.keys():
            self.total_eval_loss[key] /= eval_steps
        print({k: round(v, 4) for k, v in self.total_eval_loss.items()})
        self.total_eval_loss = defaultdict(float)
        for key in self.model.keys():
            self.model[key].train()

    @torch.no_grad()
    def _eval_step(self, batch):
        x, y = batch
        x = tuple(x_.to(self.device) for x_ in x)
        y = y.to(self.device)
        y_ = self.model["generator"](*x)
        sc_loss, mag_loss = self.criterion["stft"](y_.squeeze(1), y.squeeze(1))
        aux_loss = sc_loss + mag_loss
        p_ = self.model["discriminator"](y_)
        adv_loss = self.criterion["mse"](p_, p_.new_ones(p_.size()))
        gen_loss = aux_loss + self.config["lambda_adv"] * adv_loss
        self.total_eval_loss["eval/spectral_convergence_loss"] += sc_loss.item()
        self.total_eval_loss["eval/log_stft_magnitude_loss"] += mag_loss.item()
        self.total_eval_loss["eval/adversarial_loss"] += adv_loss.item()
        self.total_eval_loss["eval/generator_loss"] += gen_loss.item()

    def run(self):
        while self.steps < self.config["train_max_steps"]:
            for batch in self.data_loader["train"]:
                self._train_step(batch)
                if self.steps % self.config["eval_interval_steps"] == 0:
                    self._eval_epoch()
