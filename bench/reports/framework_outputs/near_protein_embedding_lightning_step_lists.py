# Source: https://github.com/bioinsilico/rcsb-embedding-search/blob/03ac14d58855aad557f9036d7e7ff3c18c7942bf/src/lightning_module/lightning_embedding.py
# Report: audit: the structure-embedding LightningModule kept every training_step's graph-attached score and every validation score on the GPU in lists on self until the epoch hooks; this is the fixed variant that stores detached host copies
# Shape: same module and tuple-returning model; training_step stores z_pred.detach().cpu(), validation_step (run by Lightning under no_grad) stores z_pred.cpu() without a visible detach; epoch hooks concatenate once
# Expect: near-miss: must be silent
import lightning as L
import torch
from torch import nn, cat, stack, mean
from torcheval.metrics.functional import binary_auprc, binary_auroc


class StructureEmbeddingNet(nn.Module):
    def __init__(self, dim=640, out_dim=1024):
        super().__init__()
        layer = nn.TransformerEncoderLayer(dim, nhead=10, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=6)
        self.proj = nn.Linear(dim, out_dim)

    def embed(self, x, mask):
        return self.proj(self.encoder(x, src_key_padding_mask=mask).sum(dim=1))

    def forward(self, x, x_mask, y, y_mask):
        ex, ey = self.embed(x, x_mask), self.embed(y, y_mask)
        x_norm, y_norm = ex.norm(dim=-1), ey.norm(dim=-1)
        score = nn.functional.cosine_similarity(ex, ey)
        return score, x_norm, y_norm


class LitStructureEmbedding(L.LightningModule):
    def __init__(self, nn_model, learning_rate=1e-6, unit_norm_scale=1e-2):
        super().__init__()
        self.model = nn_model
        self.learning_rate = learning_rate
        self.unit_norm_scale = unit_norm_scale
        self.z = []
        self.z_pred = []

    def on_train_epoch_start(self):
        self.z, self.z_pred = [], []

    def training_step(self, batch, batch_idx):
        (x, x_mask), (y, y_mask), z = batch
        z_pred, x_norm, y_norm = self.model(x, x_mask, y, y_mask)
        mean_norm = mean((stack((x_norm, y_norm), dim=0) - 1) ** 2)
        self.z.append(z.cpu())
        self.z_pred.append(z_pred.detach().cpu())
        return nn.functional.mse_loss(z_pred, z) + self.unit_norm_scale * mean_norm

    def validation_step(self, batch, batch_idx):
        (x, x_mask), (y, y_mask), z = batch
        self.z.append(z.cpu())
        z_pred, _, _ = self.model(x, x_mask, y, y_mask)
        self.z_pred.append(z_pred.cpu())

    def on_validation_epoch_start(self):
        if self.z_pred:
            self.log("train_loss", nn.functional.mse_loss(cat(self.z_pred), cat(self.z)), sync_dist=True)
        self.z, self.z_pred = [], []

    def on_validation_epoch_end(self):
        z, z_pred = cat(self.z, dim=0), cat(self.z_pred, dim=0)
        self.log("pr_auc", binary_auprc(z_pred, z), sync_dist=True)
        self.log("roc_auc", binary_auroc(z_pred, z), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.learning_rate)
