# Source: https://github.com/Lightning-AI/pytorch-lightning/pull/8145
# Report: truncated BPTT only detached `hiddens` when it was a single Tensor; an nn.LSTM's (h, c) tuple went to the next split still attached to the previous split's graph
# Shape: manual TBPTT loop inside training_step; hiddens = step(x, hiddens) is loop-carried and the helper meant to truncate it only handles a Tensor, so the LSTM tuple stays attached
# Expect: TML005 line 41
import torch
import torch.nn as nn
import torch.nn.functional as F
import pytorch_lightning as pl


def detach_hiddens(hiddens):
    """Cut the graph between two truncated-BPTT splits."""
    if isinstance(hiddens, torch.Tensor):
        return hiddens.detach()
    return hiddens


class SeqTagger(pl.LightningModule):
    def __init__(self, n_in, n_hidden, n_out, truncated_bptt_steps=32, lr=1e-3):
        super().__init__()
        self.automatic_optimization = False
        self.truncated_bptt_steps = truncated_bptt_steps
        self.lr = lr
        self.lstm = nn.LSTM(n_in, n_hidden, batch_first=True)
        self.head = nn.Linear(n_hidden, n_out)

    def split_batch(self, x, y):
        k = self.truncated_bptt_steps
        return list(zip(x.split(k, dim=1), y.split(k, dim=1)))

    def step(self, x, hiddens):
        out, hiddens = self.lstm(x, hiddens)
        return self.head(out), hiddens

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        x, y = batch
        hiddens = None
        total = 0.0
        for split_idx, (x_split, y_split) in enumerate(self.split_batch(x, y)):
            logits, hiddens = self.step(x_split, hiddens)  # expect: TML005
            loss = F.cross_entropy(logits.transpose(1, 2), y_split)
            opt.zero_grad()
            self.manual_backward(loss)
            opt.step()
            hiddens = detach_hiddens(hiddens)
            total += loss.item()
        self.log("train_loss", total / (split_idx + 1), prog_bar=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)
