# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/655
# Report: LSTM language model in Lightning that feeds the previous training step's hidden state into the next step; the maintainers' answer keeps it on self but detached (truncated BPTT)
# Shape: same module; the (h, c) tuple is detached element-wise before it is cached on self, so each step's graph starts fresh
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F
import pytorch_lightning as pl


class LitLanguageModel(pl.LightningModule):
    def __init__(self, vocab_size, emb_dim=256, hid_dim=512, num_layers=2, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.embed = nn.Embedding(vocab_size, emb_dim)
        self.lstm = nn.LSTM(emb_dim, hid_dim, num_layers, batch_first=True)
        self.decoder = nn.Linear(hid_dim, vocab_size)
        self.previous_hidden = None  # cache across training steps

    def init_hidden(self, batch_size):
        shape = (self.hparams.num_layers, batch_size, self.hparams.hid_dim)
        return (torch.zeros(shape, device=self.device), torch.zeros(shape, device=self.device))

    def forward(self, text, hidden):
        emb = self.embed(text)
        out, hidden = self.lstm(emb, hidden)
        return self.decoder(out), hidden

    def on_train_epoch_start(self):
        self.previous_hidden = None

    def training_step(self, batch, batch_idx):
        text, target = batch
        if self.previous_hidden is None or self.previous_hidden[0].size(1) != text.size(0):
            self.previous_hidden = self.init_hidden(text.size(0))

        logits, hidden = self(text, self.previous_hidden)
        # carry the state to the next chunk of the corpus
        self.previous_hidden = tuple(h.detach() for h in hidden)

        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), target.reshape(-1))
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)
