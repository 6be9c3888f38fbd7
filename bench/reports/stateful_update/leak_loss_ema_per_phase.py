# Source: https://github.com/tsudalab/ENINet/blob/28603ccec5ef292b0e4da3bca69f8499ac58ffbe/src/eninet/layer/_utils.py
# Report: audit of the loss-smoothing EMA used by the Lightning wrappers: the repo detaches the previous per-phase average; without that .detach() each step's smoothed loss links to every earlier step's graph (backward-twice error or a chain that grows)
# Shape: a small LossEMA helper keeps one running value per phase in a dict on self and rebinds it from its own previous (graph-attached) value and the new loss; training_step backprops the smoothed loss
# Expect: TML005 line 24
from typing import Dict, Tuple

import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from torch import Tensor, nn


class LossEMA:
    """Smooths the regression loss so noisy batches do not dominate the update."""

    def __init__(self, scale: float = 0.99):
        self.scale = scale
        self.running: Dict[str, Tensor] = {}

    def apply(self, loss: Tensor, phase: str) -> Tensor:
        if phase not in self.running:
            self.running[phase] = loss.detach()
        else:
            self.running[phase] = self.scale * loss + (1 - self.scale) * self.running[phase]  # expect: TML005
        return self.running[phase]


class PropertyRegressor(pl.LightningModule):
    def __init__(self, encoder: nn.Module, hidden: int = 128, lr: float = 1e-3,
                 ema_scale: float = 0.99, loss_type: str = "mae"):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1))
        self.loss_fn = F.l1_loss if loss_type == "mae" else F.mse_loss
        self.ema = LossEMA(ema_scale)
        self.lr = lr

    def forward(self, graph) -> Tensor:
        return self.head(self.encoder(graph))

    def compute_loss(self, output: Tensor, labels: Tensor, phase: str) -> Tensor:
        loss = self.loss_fn(output, labels)
        if self.ema.scale < 1.0 and phase != "test":
            loss = self.ema.apply(loss, phase)
        return loss

    def step(self, batch: Tuple, phase: str) -> Dict[str, Tensor]:
        graph, labels = batch
        output = self(graph)
        log = {f"{phase}_loss": self.compute_loss(output, labels, phase)}
        log[f"{phase}_mae"] = F.l1_loss(output, labels).detach()
        return log

    def training_step(self, batch, batch_idx):
        log = self.step(batch, "train")
        self.log_dict(log, prog_bar=True, batch_size=batch[1].shape[0])
        return log["train_loss"]

    def validation_step(self, batch, batch_idx):
        log = self.step(batch, "val")
        self.log_dict(log, prog_bar=True, batch_size=batch[1].shape[0])

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.lr)
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.6, patience=10)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "monitor": "val_loss"}}
