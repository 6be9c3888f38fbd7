# Source: https://github.com/sktime/pytorch-forecasting/pull/2086
# Report: the prediction callback appended each batch's output, inputs and targets to its lists as device tensors; on long prediction runs GPU memory grew until CUDA OOM.
# Shape: a Lightning callback's on_predict_batch_end keeps the output, the input dict and the target in lists on self, all still on the device, and concatenates them at the end.
# Expect: TML004 lines 16, 18, 20
import lightning.pytorch as pl
import torch


class PredictCallback(pl.Callback):
    def __init__(self, return_x=False, return_y=False):
        self.return_x, self.return_y = return_x, return_y
        self.predictions, self.inputs, self.targets = [], [], []

    def on_predict_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        x, y = batch
        self.predictions.append(outputs["prediction"])  # expect: TML004
        if self.return_x:
            self.inputs.append(x["encoder_cont"])  # expect: TML004
        if self.return_y:
            self.targets.append(y[0])  # expect: TML004

    def on_predict_epoch_end(self, trainer, pl_module):
        self.result = {"prediction": torch.cat(self.predictions)}
        if self.return_x:
            self.result["x"] = torch.cat(self.inputs)
        if self.return_y:
            self.result["y"] = torch.cat(self.targets)
