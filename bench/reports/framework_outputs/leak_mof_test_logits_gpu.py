# Source: https://github.com/hspark1212/MOFTransformer/pull/92
# Report: PR "update test_epoch_end (save output using cpu)": test outputs were kept on the GPU across the whole test set
# Shape: test_step (grad-disabled by Lightning) appends each batch's GPU regression logits/labels to lists on self until on_test_epoch_end
# Expect: TML004 lines 54, 55
import numpy as np
import torch
import torch.nn as nn
from pytorch_lightning import LightningModule
from sklearn.metrics import r2_score


class RegressionHead(nn.Module):
    def __init__(self, hid_dim):
        super().__init__()
        self.fc = nn.Linear(hid_dim, 1)

    def forward(self, x):
        return self.fc(x).squeeze(-1)


class MOFRegressor(LightningModule):
    def __init__(self, hid_dim=256, mean=0.0, std=1.0):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(64, hid_dim), nn.GELU(), nn.Linear(hid_dim, hid_dim))
        self.regression_head = RegressionHead(hid_dim)
        self.mean = mean
        self.std = std
        self.test_logits = []
        self.test_labels = []

    def compute_regression(self, batch):
        feats = self.encoder(batch["grid"])
        logits = self.regression_head(feats) * self.std + self.mean
        labels = batch["target"]
        loss = nn.functional.mse_loss(logits, labels)
        return {
            "regression_loss": loss,
            "regression_logits": logits,
            "regression_labels": labels,
            "cif_id": batch["cif_id"],
        }

    def forward(self, batch):
        return self.compute_regression(batch)

    def training_step(self, batch, batch_idx):
        output = self(batch)
        return sum(v for k, v in output.items() if "loss" in k)

    def test_step(self, batch, batch_idx):
        output = self(batch)

        if "regression_logits" in output:
            self.test_logits.append(output["regression_logits"])  # expect: TML004
            self.test_labels.append(output["regression_labels"])  # expect: TML004
        return output

    def on_test_epoch_end(self):
        if len(self.test_logits) > 1:
            logits = torch.cat(self.test_logits).cpu().numpy()
            labels = torch.cat(self.test_labels).cpu().numpy()
            r2 = r2_score(np.array(labels), np.array(logits))
            self.log("test/r2_score", r2, sync_dist=True)
            self.test_logits.clear()
            self.test_labels.clear()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)
