# Modelled on: https://github.com/TRI-ML/packnet-sfm/pull/51
# Report: Lightning variant of the fix: return the loss to the framework and log a detached copy.
import pytorch_lightning as pl
import torch
import torch.nn.functional as F


class LitRegressor(pl.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.step_losses = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        self.step_losses.append(loss.detach())
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
