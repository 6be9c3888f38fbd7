# Source: https://github.com/ZakariaPZ/Autoencoders/blob/072ab4e3da1f33975a96aaef44fe3e7c84343fc2/autoencoders.py
# Report: a LightningModule's training_step appends the graph-attached mse_loss to self.training_step_outputs every step and only a callback's on_train_epoch_end stacks and clears the list, so each step's loss (a 0-dim view of the whole reconstruction-error storage) stays on the GPU for the entire epoch
# Shape: fixed: training_step still returns the attached loss to Lightning (which backprops it), but stores only loss.item() in self.training_step_outputs; the callback averages the floats and clears the list
# Expect: near-miss: must be silent
import lightning as pl
import torch
from torch import nn
from torch.utils import data
from torchvision import datasets, transforms


class ConvBlock(nn.Module):
    def __init__(self, cin, cout, k=3, stride=2, padding=1):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(cin, cout, k, stride, padding), nn.BatchNorm2d(cout), nn.ReLU())

    def forward(self, x):
        return self.body(x)


class LossCallback(pl.Callback):
    def on_train_epoch_end(self, trainer, pl_module):
        outs = pl_module.training_step_outputs
        epoch_mean = sum(outs) / max(len(outs), 1)
        pl_module.log("training_epoch_mean", epoch_mean)
        pl_module.training_step_outputs.clear()


class ConvAutoEncoder(pl.LightningModule):
    def __init__(self, latent_dim=8):
        super().__init__()
        self.training_step_outputs = []
        self.encoder = nn.Sequential(ConvBlock(1, 16), ConvBlock(16, 32), ConvBlock(32, 64),
                                     nn.Flatten(), nn.Linear(64 * 4 * 4, latent_dim))
        self.decoder = nn.Sequential(
            nn.Linear(latent_dim, 64 * 4 * 4), nn.Unflatten(1, (64, 4, 4)),
            nn.ConvTranspose2d(64, 32, 3, 2, 1), nn.ReLU(),
            nn.ConvTranspose2d(32, 16, 3, 2, 1, output_padding=1), nn.ReLU(),
            nn.ConvTranspose2d(16, 1, 3, 2, 1, output_padding=1), nn.Sigmoid(),
        )

    def forward(self, x):
        return self.decoder(self.encoder(x))

    def training_step(self, batch, batch_idx):
        x, _ = batch
        x_hat = self(x)
        loss = nn.functional.mse_loss(x_hat, x)
        self.training_step_outputs.append(loss.item())
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)

    def train_dataloader(self):
        mnist = datasets.MNIST(root="./data", train=True, download=True, transform=transforms.ToTensor())
        return data.DataLoader(mnist, batch_size=64, shuffle=True, num_workers=4)


if __name__ == "__main__":
    trainer = pl.Trainer(max_epochs=20, accelerator="gpu", callbacks=[LossCallback()])
    trainer.fit(ConvAutoEncoder(latent_dim=8))
