# Source: https://github.com/facebookresearch/fastMRI/pull/87
# Report: fastMRI's Lightning modules returned reconstructions and targets from validation_step; the PR changed validation_step to return only metrics "so that only metrics are stored long-term", to cut memory use in the validation loop.
# Shape: fixed shape: per-slice metrics are computed inside validation_step and only Python floats / ints / strings are returned, so what Lightning stores for validation_epoch_end holds no tensors.
# Expect: near-miss: must be silent
from collections import defaultdict

import numpy as np
import pytorch_lightning as pl
import torch
import torch.nn.functional as F


class UnetModule(pl.LightningModule):
    def __init__(self, unet, lr=1e-3):
        super().__init__()
        self.unet = unet
        self.lr = lr

    def forward(self, image):
        return self.unet(image.unsqueeze(1)).squeeze(1)

    def validation_step(self, batch, batch_idx):
        image, target, mean, std, fname, slice_num, max_value = batch
        output = self(image)
        mean = mean.unsqueeze(1).unsqueeze(2)
        std = std.unsqueeze(1).unsqueeze(2)
        output, target = output * std + mean, target * std + mean
        per_slice_mse = F.mse_loss(output, target, reduction="none").flatten(1).mean(1)
        return {
            "fname": list(fname),
            "slice_num": [int(s) for s in slice_num],
            "mse": per_slice_mse.cpu().tolist(),
            "val_loss": F.l1_loss(output, target).item(),
        }

    def validation_epoch_end(self, val_logs):
        mse_vals = defaultdict(dict)
        for log in val_logs:
            for fname, slice_num, mse in zip(log["fname"], log["slice_num"], log["mse"]):
                mse_vals[fname][slice_num] = mse
        volume_mse = [np.mean(list(v.values())) for v in mse_vals.values()]
        self.log("val_loss", float(np.mean([log["val_loss"] for log in val_logs])))
        self.log("val_mse", float(np.mean(volume_mse)))

    def configure_optimizers(self):
        return torch.optim.RMSprop(self.parameters(), lr=self.lr)
