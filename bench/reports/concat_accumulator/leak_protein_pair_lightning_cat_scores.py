# Source: https://github.com/bioinsilico/rcsb-embedding-search/blob/ac8e51cd71d102fe6b916bede8ec13a92d1f7da6/src/lightning_module/training/lightning_batch_embedding.py
# Report: audit: a LightningModule for protein-structure pair similarity grows self.z / self.z_pred with torch.cat in every training_step and validation_step; in training the concatenated predictions are the model's graph-attached outputs, kept (and re-copied) until the epoch hooks compute the loss / PR-AUC
# Shape: pair-scoring model returns one score per structure pair; the module re-concatenates targets and scores onto self each step, logs the train loss when validation starts and AUCs at validation end, resetting the buffers in the epoch hooks
# Expect: TML008 line 43; TML008 line 44; TML001 line 44; TML008 line 56; TML008 line 57
import lightning as L
import torch
from torch import nn, cat
from torcheval.metrics.functional import binary_auprc, binary_auroc


class PairScorer(nn.Module):
    def __init__(self, dim=640, hidden=1280):
        super().__init__()
        layer = nn.TransformerEncoderLayer(dim, nhead=8, dim_feedforward=hidden, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=4)

    def embed(self, x, mask):
        h = self.encoder(x, src_key_padding_mask=mask)
        return nn.functional.normalize(h.mean(dim=1), dim=-1)

    def forward(self, x, x_mask, y, y_mask):
        return (self.embed(x, x_mask) * self.embed(y, y_mask)).sum(dim=-1)


class LitStructureBatchEmbedding(L.LightningModule):
    def __init__(self, nn_model, learning_rate=1e-6, weight_decay=0.0):
        super().__init__()
        self.model = nn_model
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.reset_z()

    def reset_z(self):
        self.z = torch.empty(0, device=self.device)
        self.z_pred = torch.empty(0, device=self.device)

    def on_train_epoch_start(self):
        self.reset_z()

    def training_step(self, batch, batch_idx):
        (x, x_mask), (y, y_mask), z = batch
        z_pred = self.model(x, x_mask, y, y_mask)
        self.z = cat((self.z, z), dim=0)  # expect: TML008
        self.z_pred = cat((self.z_pred, z_pred), dim=0)  # expect: TML008, TML001
        return nn.functional.mse_loss(z_pred, z)

    def on_validation_epoch_start(self):
        # validation runs before on_train_epoch_end: log the train loss now
        if self.z.numel() > 0:
            self.log("train_loss", nn.functional.mse_loss(self.z_pred, self.z), sync_dist=True)
        self.reset_z()

    def validation_step(self, batch, batch_idx):
        # validation pairs come with precomputed chain embeddings
        x, y, z = batch
        self.z = cat((self.z, z), dim=0)  # expect: TML008
        self.z_pred = cat((self.z_pred, torch.sum(x * y, dim=1)), dim=0)  # expect: TML008

    def on_validation_epoch_end(self):
        self.log("pr_auc", binary_auprc(self.z_pred, self.z), sync_dist=True)
        self.log("roc_auc", binary_auroc(self.z_pred, self.z), sync_dist=True)
        self.log("validation_loss", nn.functional.mse_loss(self.z_pred, self.z), sync_dist=True)
        self.reset_z()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.learning_rate, weight_decay=self.weight_decay)
