# Source: https://github.com/klima7/Mc2Real-Autoencoder/blob/main/autoencoder/autoencoder.py
# Report: Minecraft-to-real autoencoder (Lightning): predict(), used by the converter for every screenshot, is decorated with @torch.no_grad() (the fix for the repository version, which runs it with autograd on); the training callback wraps its forward in torch.no_grad as well
# Shape: both inference paths run without autograd: predict() by its decorator, the epoch-end reconstruction inside a with torch.no_grad() block; training_step returns the loss and self.log gets the tensor (Lightning detaches it)
# Expect: near-miss: must be silent
import numpy as np
import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from lightning.pytorch.callbacks import Callback


def conv_block(cin, cout, act=nn.GELU):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, stride=2), act(), nn.Conv2d(cout, cout, 3, padding=1), act())


def up_block(cin, cout, act=nn.GELU):
    return nn.Sequential(nn.ConvTranspose2d(cin, cin, 3, output_padding=1, padding=1, stride=2), act(),
                         nn.Conv2d(cin, cout, 3, padding=1), act())


class Autoencoder(L.LightningModule):
    def __init__(self, base_channel_size=32, latent_dim=256, num_input_channels=3):
        super().__init__()
        self.save_hyperparameters()
        ch = base_channel_size
        self.encoder = nn.Sequential(
            conv_block(num_input_channels, ch), conv_block(ch, 2 * ch), conv_block(2 * ch, 4 * ch),
            conv_block(4 * ch, 8 * ch), nn.Flatten(), nn.Linear(16 * 8 * ch, latent_dim))
        self.decoder_linear = nn.Sequential(nn.Linear(latent_dim, 16 * 8 * ch), nn.GELU())
        self.decoder = nn.Sequential(
            up_block(8 * ch, 4 * ch), up_block(4 * ch, 2 * ch), up_block(2 * ch, ch),
            nn.ConvTranspose2d(ch, ch, 3, output_padding=1, padding=1, stride=2), nn.GELU(),
            nn.Conv2d(ch, num_input_channels, 3, padding=1), nn.Tanh())

    def forward(self, x):
        z = self.encoder(x)
        h = self.decoder_linear(z).reshape(x.shape[0], -1, 4, 4)
        return self.decoder(h)

    def _get_reconstruction_loss(self, batch):
        x, _ = batch
        x_hat = self.forward(x)
        loss = F.mse_loss(x, x_hat, reduction="none")
        return loss.sum(dim=[1, 2, 3]).mean(dim=[0])

    def configure_optimizers(self):
        return {"optimizer": torch.optim.Adam(self.parameters(), lr=1e-3)}

    def training_step(self, batch, batch_idx):
        loss = self._get_reconstruction_loss(batch)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        loss = self._get_reconstruction_loss(batch)
        self.log("val_loss", loss)

    @torch.no_grad()
    def predict(self, np_img):
        """np_img: (64, 64, 3) float image in [0, 1]; returns the same layout."""
        x = torch.from_numpy(np.transpose(np_img - 0.5, [2, 0, 1])).unsqueeze(0).to(self.device)
        img = self(x).squeeze().detach().cpu().numpy()
        return np.transpose(img, [1, 2, 0]) + 0.5


class GenerateCallback(Callback):
    def __init__(self, input_imgs, every_n_epochs=1):
        super().__init__()
        self.input_imgs = torch.from_numpy(input_imgs)
        self.every_n_epochs = every_n_epochs

    def on_train_epoch_end(self, trainer, pl_module):
        if trainer.current_epoch % self.every_n_epochs == 0:
            input_imgs = self.input_imgs.to(pl_module.device)
            with torch.no_grad():
                pl_module.eval()
                reconst_imgs = pl_module(input_imgs)
                pl_module.train()
            imgs = torch.stack([input_imgs, reconst_imgs], dim=1).flatten(0, 1)
            grid = torchvision.utils.make_grid(imgs, nrow=2, normalize=True)
            trainer.logger.experiment.add_image("Reconstructions", grid, global_step=trainer.global_step)


class Mc2RealConverter:
    def __init__(self, ckpt_path):
        device = "cuda" if torch.cuda.is_available() else "cpu"
        self.autoencoder = Autoencoder.load_from_checkpoint(ckpt_path, map_location=device)

    def __call__(self, mc_img, blend_factor=0.5):
        small = np.asarray(mc_img, dtype=np.float32)[:64, :64]
        realized = self.autoencoder.predict(small)
        return blend_factor * small + (1 - blend_factor) * realized


def convert_frames(converter, frames):
    return [converter(frame) for frame in frames]
