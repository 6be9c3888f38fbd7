# Source: https://github.com/KhanhNguyen4999/Speech-Enhancement-CLSKD/blob/f3ab689fd4339f822e274625628cb2cd9408209a/distill.py
# Report: audit of a DCCRN speech-enhancement knowledge-distillation LightningModule: every training_step builds feature-map extractors that register forward hooks on the teacher's and the student's encoder/decoder blocks; the repo calls remove_hook() at the end of the step, this is the variant it avoided, so hooks pile up step after step and every old tap keeps appending (graph-attached) student feature maps
# Shape: a FeatureTap helper whose hook closures append each block's output into per-key lists; training_step registers taps on both models, runs them, computes the multi-resolution STFT base loss plus per-block feature-distillation losses, logs and returns the loss
# Expect: TML007 line 50; TML007 line 52; TML007 line 53
import torch
import torch.nn.functional as F
import pytorch_lightning as pl
from torch import optim


class FeatureTap:
    """Collects the outputs of the hooked blocks, one list per block family."""

    def __init__(self):
        self.maps = {"encoder": [], "decoder": [], "clstm": []}

    def hook(self, key):
        def fn(module, inputs, output):
            self.maps[key].append(output)
        return fn


def spkd(student_map, teacher_map):
    s = student_map.flatten(1)
    t = teacher_map.flatten(1)
    gs = F.normalize(s @ s.t(), dim=1)
    gt = F.normalize(t @ t.t(), dim=1)
    return F.mse_loss(gs, gt)


class KnowledgeDistillation(pl.LightningModule):
    def __init__(self, teacher, student, stft_loss, lr=1e-3, kd_weight=1.0):
        super().__init__()
        self.teacher = teacher.eval()
        for p in self.teacher.parameters():
            p.requires_grad = False
        self.student = student
        self.stft_loss = stft_loss
        self.lr = lr
        self.kd_weight = kd_weight

    def forward(self, x):
        return self.student(x)

    def training_step(self, batch, batch_idx):
        mix, clean = batch
        teacher_tap, student_tap = FeatureTap(), FeatureTap()
        for model, tap in ((self.teacher, teacher_tap), (self.student, student_tap)):
            for block in model.encoder:
                block.register_forward_hook(tap.hook("encoder"))  # expect: TML007
            for block in model.decoder:
                block.register_forward_hook(tap.hook("decoder"))  # expect: TML007
            model.enhance.register_forward_hook(tap.hook("clstm"))  # expect: TML007
        with torch.no_grad():
            self.teacher(mix)
        estimate = self.student(mix)
        base_loss = self.stft_loss(estimate.squeeze(1), clean.squeeze(1))
        kd_losses = {}
        for key in ("encoder", "decoder", "clstm"):
            pairs = zip(student_tap.maps[key], teacher_tap.maps[key])
            kd_losses[key] = sum(spkd(s, t) for s, t in pairs)
        loss = base_loss + self.kd_weight * sum(kd_losses.values())
        self.log("train_loss", loss, on_step=True, on_epoch=True, prog_bar=True)
        self.log_dict({f"kd_{k}": v for k, v in kd_losses.items()}, on_step=True)
        return loss

    def validation_step(self, batch, batch_idx):
        mix, clean = batch
        estimate = self.student(mix)
        self.log("val_loss", self.stft_loss(estimate.squeeze(1), clean.squeeze(1)), prog_bar=True)

    def configure_optimizers(self):
        return optim.Adam(self.student.parameters(), lr=self.lr)
