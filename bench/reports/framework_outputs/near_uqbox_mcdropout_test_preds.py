# Source: https://github.com/lightning-uq-box/lightning-uq-box/blob/03260657048826b20a329c4ebeba6d4269f2aa38/lightning_uq_box/uq_methods/mc_dropout.py
# Report: MC-dropout regression LightningModule: predict_step switches dropout on and stacks num_mc_samples forward passes; test results are written batch by batch by on_test_batch_end through save_regression_predictions
# Shape: the MC stack runs under torch.no_grad() inside a Lightning test/predict step; the per-batch dict goes to a writer helper that converts every tensor with .cpu().numpy() and appends rows to a CSV, so nothing accumulates on the GPU across the test set
# Expect: near-miss: must be silent
import os

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from lightning import LightningModule
from torch import Tensor


def process_regression_prediction(preds: Tensor) -> dict:
    mean = preds[:, 0:1, :].mean(-1)
    epistemic = preds[:, 0:1, :].std(-1)
    return {"pred": mean, "pred_uct": epistemic, "epistemic_uct": epistemic}


def save_regression_predictions(outputs: dict, path: str) -> None:
    cpu_outputs = {}
    for key, val in outputs.items():
        if isinstance(val, Tensor):
            cpu_outputs[key] = val.squeeze(-1).cpu().numpy()
        else:
            cpu_outputs[key] = np.array(val)
    df = pd.DataFrame.from_dict(cpu_outputs)
    if os.path.exists(path):
        df.to_csv(path, mode="a", index=False, header=False)
    else:
        df.to_csv(path, index=False)


class MCDropoutRegression(LightningModule):
    pred_file_name = "preds.csv"

    def __init__(self, model: nn.Module, num_mc_samples: int, loss_fn: nn.Module):
        super().__init__()
        self.model = model
        self.loss_fn = loss_fn
        self.save_hyperparameters(ignore=["model", "loss_fn"])

    def activate_dropout(self) -> None:
        for module in self.model.modules():
            if isinstance(module, nn.Dropout):
                module.train()

    def training_step(self, batch, batch_idx):
        out = self.model(batch["input"])
        loss = self.loss_fn(out, batch["target"])
        self.log("train_loss", loss)
        return loss

    def predict_step(self, X: Tensor, batch_idx: int = 0, dataloader_idx: int = 0) -> dict:
        self.activate_dropout()
        with torch.no_grad():
            preds = torch.stack(
                [self.model(X) for _ in range(self.hparams.num_mc_samples)], dim=-1
            )
        return process_regression_prediction(preds)

    def test_step(self, batch, batch_idx, dataloader_idx=0):
        out_dict = self.predict_step(batch["input"])
        out_dict["target"] = batch["target"].squeeze(-1)
        self.log("test_mse", nn.functional.mse_loss(out_dict["pred"].squeeze(-1), out_dict["target"]))
        return out_dict

    def on_test_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0) -> None:
        save_regression_predictions(
            outputs, os.path.join(self.trainer.default_root_dir, self.pred_file_name)
        )

    def configure_optimizers(self):
        return torch.optim.Adam(self.model.parameters(), lr=1e-3)
