# Source: https://github.com/AntixK/PyTorch-VAE/blob/09c445102360f139bd14822d1475080757e4ae08/experiment.py
# Report: audited correct idiom: the VAEXperiment LightningModule's training_step gets a dict of graph-attached losses from model.loss_function (loss, Reconstruction_Loss, KLD) and logs it as {key: val.item() for key, val in train_loss.items()} before returning it to Lightning
# Shape: rewrite where the per-step loss dict is handed as-is to a small history logger kept on self, whose log() appends the dict to a list that lives for the whole run
# Expect: TML001 line 48
import math

import pytorch_lightning as pl
import torch
import torchvision.utils as vutils
from torch import optim


class LossHistory:
    """Keeps every logged step so the epoch summary can be plotted later."""

    def __init__(self):
        self.rows = []

    def log(self, metrics, step):
        self.rows.append((step, metrics))

    def epoch_mean(self, key, last_n):
        values = [float(m[key]) for _, m in self.rows[-last_n:]]
        return sum(values) / max(len(values), 1)


class VAEXperiment(pl.LightningModule):
    def __init__(self, vae_model, params: dict) -> None:
        super().__init__()
        self.model = vae_model
        self.params = params
        self.curr_device = None
        self.history = LossHistory()

    def forward(self, input, **kwargs):
        return self.model(input, **kwargs)

    def training_step(self, batch, batch_idx, optimizer_idx=0):
        real_img, labels = batch
        self.curr_device = real_img.device

        results = self.forward(real_img, labels=labels)
        train_loss = self.model.loss_function(*results,
                                              M_N=self.params["kld_weight"],
                                              optimizer_idx=optimizer_idx,
                                              batch_idx=batch_idx)

        self.history.log(train_loss, self.global_step)  # expect: TML001
        return train_loss["loss"]

    def validation_step(self, batch, batch_idx, optimizer_idx=0):
        real_img, labels = batch
        self.curr_device = real_img.device
        results = self.forward(real_img, labels=labels)
        val_loss = self.model.loss_function(*results, M_N=1.0,
                                            optimizer_idx=optimizer_idx,
                                            batch_idx=batch_idx)
        self.log_dict({f"val_{key}": val.item() for key, val in val_loss.items()}, sync_dist=True)

    def on_validation_end(self) -> None:
        self.sample_images()

    def sample_images(self):
        test_input, test_label = next(iter(self.trainer.datamodule.test_dataloader()))
        test_input = test_input.to(self.curr_device)
        test_label = test_label.to(self.curr_device)
        recons = self.model.generate(test_input, labels=test_label)
        vutils.save_image(recons.data,
                          f"{self.logger.log_dir}/Reconstructions/recons_Epoch_{self.current_epoch}.png",
                          normalize=True,
                          nrow=int(math.sqrt(recons.size(0))))

    def configure_optimizers(self):
        optimizer = optim.Adam(self.model.parameters(),
                               lr=self.params["LR"],
                               weight_decay=self.params["weight_decay"])
        scheduler = optim.lr_scheduler.ExponentialLR(optimizer, gamma=self.params["scheduler_gamma"])
        return [optimizer], [scheduler]
