# Source: https://github.com/KhanhNguyen4999/Speech-Enhancement-CLSKD/blob/f3ab689fd4339f822e274625628cb2cd9408209a/distill.py
# Report: audit of a DCCRN speech-enhancement knowledge-distillation LightningModule: every training_step registers forward hooks on the teacher's and the student's encoder/decoder blocks to grab feature maps, and removes them again before the step ends (remove_hook(), "to prevent memory leaking")
# Shape: as the repo does it: the per-step taps keep every hook handle in a list and the step removes them all after the forward passes, so each step's hooks and tap lists die with the step
# Expect: near-miss: must be silent
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
        handles = []
        for model, tap in ((self.teacher, teacher_tap), (self.student, student_tap)):
            for block in model.encoder:
                handles.append(block.register_forward_hook(tap.hook("encoder")))
            for block in model.decoder:
                handles.append(block.register_forward_hook(tap.hook("decoder")))
            handles.append(model.enhance.register_forward_hook(tap.hook("clstm")))
        with torch.no_grad():
            self.teacher(mix)
        estimate = self.student(mix)
        for handle in handles:  # detach the taps before anything else runs a forward
            handle.remove()
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
