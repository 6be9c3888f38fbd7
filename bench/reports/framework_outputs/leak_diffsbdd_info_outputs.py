# Source: https://github.com/arneschneuing/DiffSBDD/issues/10
# Report: lightning_modules.py LigandPocketDDPM.training_step: training_step returns an `info` dict whose loss terms (error_t_lig, loss_0, kl_prior, ...) all still carry grad_fn; maintainer agreed detaching them would be safer
# Shape: after the Lightning 2.0 port the module collects each step's `info` itself on self.train_step_outputs; the grad-attached loss terms outlive the step
# Expect: TML001 line 55
from pathlib import Path

import numpy as np
import torch
import pytorch_lightning as pl


class Queue():
    def __init__(self, max_len=50):
        self.items = []
        self.max_len = max_len

    def __len__(self):
        return len(self.items)

    def add(self, item):
        self.items.insert(0, item)
        if len(self) > self.max_len:
            self.items.pop()

    def mean(self):
        return np.mean(self.items)


class LigandPocketDDPM(pl.LightningModule):
    def __init__(self, ddpm, lr, clip_grad=True):
        super().__init__()
        self.ddpm = ddpm
        self.lr = lr
        self.clip_grad = clip_grad
        self.gradnorm_queue = Queue()
        self.gradnorm_queue.add(3000)
        self.train_step_outputs = []

    def forward(self, data):
        nll, error_t_lig, loss_0, kl_prior, info = self.ddpm(data, return_info=True)
        info['error_t_lig'] = error_t_lig.mean(0)
        info['loss_0'] = loss_0.mean(0)
        info['kl_prior'] = kl_prior.mean(0)
        return nll, info

    def log_metrics(self, metrics_dict, split, batch_size=None, **kwargs):
        for m, value in metrics_dict.items():
            self.log(f'{m}/{split}', value, batch_size=batch_size, **kwargs)

    def training_step(self, data, *args):
        nll, info = self.forward(data)
        loss = nll.mean(0)
        info['loss'] = loss
        self.log_metrics(info, 'train', batch_size=len(data['num_lig_atoms']))
        self.train_step_outputs.append(info)  # expect: TML001
        return loss

    def on_train_epoch_end(self):
        losses = [out['loss'] for out in self.train_step_outputs]
        print(f'epoch {self.current_epoch}: mean train nll {float(sum(losses) / len(losses)):.4f}')
        self.train_step_outputs.clear()

    def configure_gradient_clipping(self, optimizer, gradient_clip_val=None,
                                    gradient_clip_algorithm=None):
        if not self.clip_grad:
            return
        max_grad_norm = 1.5 * self.gradnorm_queue.mean()
        params = [p for g in optimizer.param_groups for p in g['params']]
        grad_norm = torch.nn.utils.clip_grad_norm_(params, max_grad_norm)
        self.gradnorm_queue.add(float(grad_norm))

    def configure_optimizers(self):
        return torch.optim.AdamW(self.ddpm.parameters(), lr=self.lr,
                                 amsgrad=True, weight_decay=1e-12)

    def save_losses(self, outdir):
        Path(outdir).mkdir(parents=True, exist_ok=True)
