# Source: https://github.com/ratschlab/DeepSpot2Cell/issues/2
# Report: Lightning model appends per-cell predictions from training_step to self lists without detaching; VRAM grows linearly over the epoch until OOM.
# Shape: cell_preds comes back from a helper method (_cell_forward -> sub-module ensemble) with its graph, is masked and appended to self.* lists that live until on_train_epoch_end.
# Expect: TML001 lines 61, 64
import torch
from torch import nn
import lightning as L


class Head(nn.Module):
    def __init__(self, d_in, d_out, p=0.1):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, d_in), nn.Dropout(p), nn.ReLU(),
                                 nn.Linear(d_in, d_out), nn.ReLU())

    def forward(self, x):
        return self.net(x)


def pearson(a, b):
    a = a - a.mean(0)
    b = b - b.mean(0)
    return (a * b).sum(0) / (a.norm(dim=0) * b.norm(dim=0) + 1e-8)


class SpotToCell(L.LightningModule):
    def __init__(self, d_in, n_genes, n_heads=4, lr=1e-4):
        super().__init__()
        self.lr = lr
        self.heads = nn.ModuleList([Head(d_in, n_genes) for _ in range(n_heads)])
        self.train_losses = []
        self.train_in_preds, self.train_in_targets = [], []
        self.train_out_preds, self.train_out_targets = [], []

    def _ensemble(self, x):
        return torch.stack([h(x) for h in self.heads], 1).mean(1)

    def forward(self, cells, mask):
        return self._ensemble((cells * mask.unsqueeze(-1)).sum(1))

    def _cell_forward(self, cells):
        return self._ensemble(cells)

    def training_step(self, batch, batch_idx):
        cells = batch["cells"].float()
        mask = batch["mask"].float()
        inside = batch["inside"].float()
        spot_pred = self(cells * inside.unsqueeze(-1), mask * inside)
        loss = nn.functional.mse_loss(spot_pred, batch["spot"].float())
        self.log("train_loss", loss, on_epoch=True)
        self.train_losses.append(loss.item())

        for b in range(cells.size(0)):
            valid = mask[b] > 0
            if not valid.any():
                continue
            cell_preds = self._cell_forward(cells[b, valid]).clamp_(min=0.0)
            cell_targets = batch["cell_expr"][b, valid].float()
            is_in = inside[b, valid] > 0
            if is_in.any():
                self.train_in_preds.append(cell_preds[is_in])  # expect: TML001
                self.train_in_targets.append(cell_targets[is_in])
            if (~is_in).any():
                self.train_out_preds.append(cell_preds[~is_in])  # expect: TML001
                self.train_out_targets.append(cell_targets[~is_in])
        return loss

    def on_train_epoch_end(self):
        if self.train_in_preds:
            r = pearson(torch.cat(self.train_in_preds), torch.cat(self.train_in_targets))
            self.log("train_cell_inside_pearson", r.mean())
        if self.train_out_preds:
            r = pearson(torch.cat(self.train_out_preds), torch.cat(self.train_out_targets))
            self.log("train_cell_outside_pearson", r.mean())
        self.train_in_preds.clear()
        self.train_in_targets.clear()
        self.train_out_preds.clear()
        self.train_out_targets.clear()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)
