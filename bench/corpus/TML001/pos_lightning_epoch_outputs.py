# Modelled on: https://github.com/TRI-ML/packnet-sfm/pull/51
# Report: the fix detached the loss before appending it to the training output list kept across the epoch.
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
        self.step_losses.append(loss)  # expect: TML001
        return loss

    def on_train_epoch_end(self):
        self.log("train_loss_epoch", torch.stack(self.step_losses).mean())
        self.step_losses.clear()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
