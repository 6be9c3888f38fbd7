# Source: https://github.com/facebookresearch/fastMRI/pull/87
# Report: fastMRI's Lightning modules returned reconstructions and targets from validation_step; the PR changed validation_step to return only metrics "so that only metrics are stored long-term", to cut memory use in the validation loop.
# Shape: validation_step returns a dict holding full-resolution output/target image tensors on the GPU; Lightning (1.x, validation_epoch_end defined) stores every returned dict until the end of the validation epoch.
# Expect: TML017 line 26
from collections import defaultdict

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
        return {  # expect: TML017
            "batch_idx": batch_idx,
            "fname": fname,
            "slice_num": slice_num,
            "max_value": max_value,
            "output": output * std + mean,
            "target": target * std + mean,
            "val_loss": F.l1_loss(output, target),
        }

    def validation_epoch_end(self, val_logs):
        outputs = defaultdict(dict)
        targets = defaultdict(dict)
        for log in val_logs:
            for i, (fname, slice_num) in enumerate(zip(log["fname"], log["slice_num"])):
                outputs[fname][int(slice_num)] = log["output"][i]
                targets[fname][int(slice_num)] = log["target"][i]
        mse = [F.mse_loss(torch.stack([outputs[f][s] for s in sorted(outputs[f])]),
                          torch.stack([targets[f][s] for s in sorted(targets[f])])) for f in outputs]
        self.log("val_loss", torch.stack([log["val_loss"] for log in val_logs]).mean())
        self.log("val_mse", torch.stack(mse).mean())

    def configure_optimizers(self):
        return torch.optim.RMSprop(self.parameters(), lr=self.lr)
