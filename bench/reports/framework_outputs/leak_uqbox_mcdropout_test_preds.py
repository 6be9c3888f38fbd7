# Source: https://github.com/lightning-uq-box/lightning-uq-box/blob/03260657048826b20a329c4ebeba6d4269f2aa38/lightning_uq_box/uq_methods/mc_dropout.py
# Report: MC-dropout regression LightningModule; the repository writes each test batch to CSV from on_test_batch_end, this variant keeps every batch's raw MC samples on self to save them once in on_test_epoch_end
# Shape: preds = torch.stack of num_mc_samples model outputs (no graph: no_grad inside a Lightning test step) stays a CUDA tensor [B, out, S]; self.test_samples.append(preds) in test_step keeps one per test batch until the epoch ends, so GPU memory grows with the test set times the sample count
# Expect: TML004 line 57
import os

import torch
import torch.nn as nn
from lightning import LightningModule
from torch import Tensor


def process_regression_prediction(preds: Tensor) -> dict:
    mean = preds[:, 0:1, :].mean(-1)
    epistemic = preds[:, 0:1, :].std(-1)
    return {"pred": mean, "pred_uct": epistemic, "epistemic_uct": epistemic}


class MCDropoutRegression(LightningModule):
    samples_file_name = "mc_samples.pt"

    def __init__(self, model: nn.Module, num_mc_samples: int, loss_fn: nn.Module):
        super().__init__()
        self.model = model
        self.loss_fn = loss_fn
        self.test_samples = []
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
        self.activate_dropout()
        with torch.no_grad():
            preds = torch.stack(
                [self.model(batch["input"]) for _ in range(self.hparams.num_mc_samples)], dim=-1
            )
        out_dict = process_regression_prediction(preds)
        out_dict["target"] = batch["target"].squeeze(-1)
        self.log("test_mse", nn.functional.mse_loss(out_dict["pred"].squeeze(-1), out_dict["target"]))
        self.test_samples.append(preds)  # expect: TML004
        return out_dict

    def on_test_epoch_end(self) -> None:
        samples = torch.cat(self.test_samples, dim=0)
        torch.save(samples.cpu(), os.path.join(self.trainer.default_root_dir, self.samples_file_name))
        self.test_samples.clear()

    def configure_optimizers(self):
        return torch.optim.Adam(self.model.parameters(), lr=1e-3)
