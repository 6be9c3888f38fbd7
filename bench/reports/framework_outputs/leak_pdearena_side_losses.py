# Source: https://github.com/pdearena/pdearena/pull/4
# Report: neural PDE surrogate (Navier-Stokes UNet) trained with Lightning: single-GPU memory climbs ~2 MB per step from 7.6 GB to >23 GB and OOMs inside the first epoch; the per-field scalar/vector losses returned from training_step were not detached
# Shape: training_epoch_end is overridden, so Lightning keeps every dict returned by training_step until the epoch ends; it detaches the "loss" key, but scalar_loss / vector_loss are extra graph-attached tensors computed from the prediction slices and never backpropagated, so each step pins their own autograd nodes and saved buffers
# Expect: TML001 line 65
from typing import Any, List, Tuple

import torch
import torch.nn.functional as F
from pytorch_lightning import LightningModule


def custommse_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    err = F.mse_loss(pred, target, reduction="none")
    per_sample = err.mean(dim=tuple(range(3, err.ndim))).sum(dim=(1, 2))
    return per_sample.mean()


class CustomMSELoss(torch.nn.Module):
    def forward(self, pred, target):
        return custommse_loss(pred, target)


def bootstrap(x: torch.Tensor, nboot: int, binsize: int) -> Tuple[torch.Tensor, torch.Tensor]:
    boots = []
    x = x.reshape(-1, binsize, *x.shape[1:])
    for _ in range(nboot):
        boots.append(torch.mean(x[torch.randint(len(x), (len(x),))], dim=(0, 1)))
    return torch.tensor(boots).mean(), torch.tensor(boots).std()


class PDEConfig:
    def __init__(self, n_scalar_components=1, n_vector_components=1):
        self.n_scalar_components = n_scalar_components
        self.n_vector_components = n_vector_components


class PDEModel(LightningModule):
    def __init__(self, model: torch.nn.Module, pde: PDEConfig, lr: float = 2e-4):
        super().__init__()
        self.save_hyperparameters(ignore=["model", "pde"])
        self.model = model
        self.pde = pde
        self.train_criterion = CustomMSELoss()

    def forward(self, x):
        return self.model(x)

    def train_step(self, batch):
        x, y = batch
        pred = self.model(x)
        loss = self.train_criterion(pred, y)
        return loss, pred, y

    def training_step(self, batch, batch_idx: int):
        loss, preds, targets = self.train_step(batch)
        n_s = self.pde.n_scalar_components
        scalar_loss = self.train_criterion(preds[:, :, 0:n_s, ...], targets[:, :, 0:n_s, ...])
        if self.pde.n_vector_components > 0:
            vector_loss = self.train_criterion(preds[:, :, n_s:, ...], targets[:, :, n_s:, ...])
        else:
            vector_loss = torch.tensor(0.0)
        self.log("train/loss", loss)
        self.log("train/scalar_loss", scalar_loss)
        self.log("train/vector_loss", vector_loss)
        return {"loss": loss, "scalar_loss": scalar_loss, "vector_loss": vector_loss}  # expect: TML001

    def training_epoch_end(self, outputs: List[Any]):
        # `outputs` holds the dict returned by every training_step of the epoch
        for key in outputs[0].keys():
            if "loss" in key:
                loss_vec = torch.stack([outputs[i][key] for i in range(len(outputs))])
                mean, std = bootstrap(loss_vec, 64, 1)
                self.log(f"train/{key}_mean", mean)
                self.log(f"train/{key}_std", std)

    def configure_optimizers(self):
        return torch.optim.Adam(self.model.parameters(), lr=self.hparams.lr)
