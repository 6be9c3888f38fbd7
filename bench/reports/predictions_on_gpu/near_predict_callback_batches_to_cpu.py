# Source: https://github.com/sktime/pytorch-forecasting/pull/2086
# Report: the proposed fix detaches and moves every kept batch tensor to the CPU, as the legacy implementation did.
# Shape: same prediction callback; what it keeps per batch is moved off the device before it joins the lists.
# Expect: near-miss: must be silent
import lightning.pytorch as pl
import torch


class PredictCallback(pl.Callback):
    def __init__(self, return_x=False, return_y=False):
        self.return_x, self.return_y = return_x, return_y
        self.predictions, self.inputs, self.targets = [], [], []

    def on_predict_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        x, y = batch
        self.predictions.append(outputs["prediction"].detach().cpu())
        if self.return_x:
            self.inputs.append(x["encoder_cont"].detach().cpu())
        if self.return_y:
            self.targets.append(y[0].detach().cpu())

    def on_predict_epoch_end(self, trainer, pl_module):
        self.result = {"prediction": torch.cat(self.predictions)}
        if self.return_x:
            self.result["x"] = torch.cat(self.inputs)
        if self.return_y:
            self.result["y"] = torch.cat(self.targets)
