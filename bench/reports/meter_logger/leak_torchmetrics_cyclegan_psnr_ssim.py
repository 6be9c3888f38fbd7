# Source: https://github.com/Lightning-AI/torchmetrics/issues/2597
# Report: CycleGAN in Lightning: GPU memory grew until OOM when PSNR/SSIM (MetricCollection) were updated in training_step with the generator output; metric values showed grad_fn; `fake.detach()` fixed it
# Shape: a MetricCollection held on self is called every training_step with the attached generator output, so its running sum states keep the generator graph; validation_step (no_grad in Lightning) does the same call
# Expect: TML001 line 51
import pytorch_lightning as pl
import torch
from torch import nn
from torchmetrics import MetricCollection
from torchmetrics.image import PeakSignalNoiseRatio, StructuralSimilarityIndexMeasure


class CycleGAN(pl.LightningModule):
    def __init__(self, gen_ab, gen_ba, disc_a, disc_b, lambda_cycle=10.0, lr=2e-4):
        super().__init__()
        self.gen_ab, self.gen_ba = gen_ab, gen_ba
        self.disc_a, self.disc_b = disc_a, disc_b
        self.lambda_cycle = lambda_cycle
        self.lr = lr
        self.automatic_optimization = False
        self.adv_loss = nn.MSELoss()
        self.cycle_loss = nn.L1Loss()
        self.train_metrics = MetricCollection(
            {"PSNR": PeakSignalNoiseRatio(), "SSIM": StructuralSimilarityIndexMeasure()}
        )
        self.valid_metrics = self.train_metrics.clone(prefix="val_")

    def _adv(self, disc, x, is_real):
        pred = disc(x)
        return self.adv_loss(pred, torch.ones_like(pred) if is_real else torch.zeros_like(pred))

    def training_step(self, batch, batch_idx):
        real_a, real_b = batch
        opt_g, opt_d = self.optimizers()

        fake_b = self.gen_ab(real_a)
        fake_a = self.gen_ba(real_b)
        cycle = self.cycle_loss(self.gen_ba(fake_b), real_a) + self.cycle_loss(self.gen_ab(fake_a), real_b)
        loss_g = self._adv(self.disc_b, fake_b, True) + self._adv(self.disc_a, fake_a, True) + self.lambda_cycle * cycle
        opt_g.zero_grad()
        self.manual_backward(loss_g)
        opt_g.step()

        loss_d = (
            self._adv(self.disc_b, real_b, True) + self._adv(self.disc_b, fake_b.detach(), False)
            + self._adv(self.disc_a, real_a, True) + self._adv(self.disc_a, fake_a.detach(), False)
        ) / 2
        opt_d.zero_grad()
        self.manual_backward(loss_d)
        opt_d.step()

        train_metrics = self.train_metrics(fake_b, real_b)  # expect: TML001
        self.log_dict(train_metrics, prog_bar=True)
        self.log_dict({"loss_g": loss_g.detach(), "loss_d": loss_d.detach()})

    def validation_step(self, batch, batch_idx):
        real_a, real_b = batch
        fake_b = self.gen_ab(real_a)
        valid_metrics = self.valid_metrics(fake_b, real_b)
        self.log_dict(valid_metrics)

    def configure_optimizers(self):
        gen_params = list(self.gen_ab.parameters()) + list(self.gen_ba.parameters())
        disc_params = list(self.disc_a.parameters()) + list(self.disc_b.parameters())
        return [torch.optim.Adam(gen_params, lr=self.lr, betas=(0.5, 0.999)),
                torch.optim.Adam(disc_params, lr=self.lr, betas=(0.5, 0.999))]
