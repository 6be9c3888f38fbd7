# Source: https://lightning.ai/docs/pytorch/stable/_sources/common/tbptt.rst.txt
# Report: Lightning's truncated-BPTT recipe (manual optimization) splits each long batch along time and must detach the hidden state after every split; without that "truncate" step the graph spans every split, so activation memory grows with the sequence length instead of the split size
# Shape: a LightningModule training_step loops over time splits, carries the GRU hidden state from split to split still attached, sums the split losses and backpropagates once at the end
# Expect: TML005 line 39
import torch
import torch.nn as nn
import torch.nn.functional as F
import pytorch_lightning as pl


class SeqTagger(nn.Module):
    def __init__(self, n_features, hidden, n_tags):
        super().__init__()
        self.gru = nn.GRU(n_features, hidden, batch_first=True)
        self.out = nn.Linear(hidden, n_tags)

    def forward(self, x, hiddens):
        feats, hiddens = self.gru(x, hiddens)
        return self.out(feats), hiddens


class LitTBPTT(pl.LightningModule):
    def __init__(self, n_features=40, hidden=256, n_tags=12, split_size=100, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.automatic_optimization = False
        self.tagger = SeqTagger(n_features, hidden, n_tags)

    def split_batch(self, batch):
        x, y = batch
        return zip(x.split(self.hparams.split_size, dim=1), y.split(self.hparams.split_size, dim=1))

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        x, _ = batch
        hiddens = torch.zeros(1, x.size(0), self.hparams.hidden, device=self.device)
        total = 0.0
        for x_split, y_split in self.split_batch(batch):
            logits, hiddens = self.tagger(x_split, hiddens)  # expect: TML005
            loss = F.cross_entropy(logits.flatten(0, 1), y_split.flatten())
            total = total + loss
        opt.zero_grad()
        self.manual_backward(total)
        opt.step()
        self.log("train_loss", total.detach(), prog_bar=True)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits, _ = self.tagger(x, None)
        self.log("val_loss", F.cross_entropy(logits.flatten(0, 1), y.flatten()))

    def configure_optimizers(self):
        return torch.optim.Adam(self.tagger.parameters(), lr=self.hparams.lr)


def main(train_loader, val_loader, epochs=5):
    model = LitTBPTT()
    trainer = pl.Trainer(max_epochs=epochs, accelerator="gpu", devices=1)
    trainer.fit(model, train_loader, val_loader)
    return model
