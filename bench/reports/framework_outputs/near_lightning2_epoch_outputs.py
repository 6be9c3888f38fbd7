# Source: https://walmsley.dev/posts/pytorch-lightning-v2-hooks
# Report: Lightning 2.0 removed training_epoch_end(outputs); the migration stores each training_step output on self for on_train_epoch_end, with the warning to mind the memory and to clear the list every epoch
# Shape: same migration done as the post advises: detached CPU copies are stored per step and the lists are cleared in on_train_epoch_end
# Expect: near-miss: must be silent
import lightning as L
import torch
import torch.nn.functional as F


class VoteFractionModel(L.LightningModule):
    def __init__(self, encoder, n_questions=34, lr=1e-4):
        super().__init__()
        self.encoder = encoder
        self.head = torch.nn.Linear(encoder.out_dim, n_questions)
        self.lr = lr
        self.train_preds = []
        self.train_targets = []

    def forward(self, images):
        return torch.softmax(self.head(self.encoder(images)), dim=-1)

    def training_step(self, batch, batch_idx):
        images, fractions = batch
        preds = self(images)
        loss = F.mse_loss(preds, fractions)
        self.log("train/loss", loss, prog_bar=True)
        # was: return {"loss": loss, "preds": preds} for training_epoch_end(outputs)
        self.train_preds.append(preds.detach().cpu())
        self.train_targets.append(fractions.cpu())
        return loss

    def on_train_epoch_end(self):
        preds = torch.cat(self.train_preds)
        targets = torch.cat(self.train_targets).to(preds.device)
        mae = (preds - targets).abs().mean()
        self.log("train/epoch_mae", mae)
        # free the epoch's outputs before the next epoch starts
        self.train_preds.clear()
        self.train_targets.clear()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)
