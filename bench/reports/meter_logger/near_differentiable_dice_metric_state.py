# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/4098
# Report: a Metric subclass with a list state, used on training predictions to compute a differentiable Dice score, made memory grow every step because its states kept the graph
# Shape: same metric and module, but update() scores a detached copy of the logits and keeps sum/count states, so no state holds the graph
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
import pytorch_lightning as pl
from torchmetrics import Metric


def differentiable_dice_score(probs, target, eps=1e-6):
    one_hot = F.one_hot(target, probs.size(1)).permute(0, 3, 1, 2).float()
    inter = (probs * one_hot).sum(dim=(2, 3))
    union = probs.sum(dim=(2, 3)) + one_hot.sum(dim=(2, 3))
    return (2 * inter + eps) / (union + eps)


class DifferentiableDiceCoefficient(Metric):
    def __init__(self, include_background=False):
        super().__init__()
        self.include_background = include_background
        self.add_state("dice_sum", default=torch.tensor(0.0), dist_reduce_fx="sum")
        self.add_state("count", default=torch.tensor(0), dist_reduce_fx="sum")

    def update(self, logits, target):
        # metric states must never hold the graph: score a detached copy
        probs = logits.detach().softmax(dim=1)
        dice = differentiable_dice_score(probs, target)
        if not self.include_background:
            dice = dice[:, 1:]
        self.dice_sum += dice.mean(dim=1).sum()
        self.count += dice.size(0)

    def compute(self):
        return self.dice_sum / self.count.clamp(min=1)


class SegmentationTask(pl.LightningModule):
    def __init__(self, module, lr=1e-3):
        super().__init__()
        self.module = module
        self.lr = lr
        self._dice = DifferentiableDiceCoefficient(include_background=False)

    def training_step(self, batch, batch_idx):
        x, y = batch
        y_hat = self.module(x)
        loss = F.cross_entropy(y_hat, y)
        self._dice.update(y_hat, y)
        self.log("train_loss", loss)
        return loss

    def on_train_epoch_end(self):
        self.log("train_dice", self._dice.compute())
        self._dice.reset()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)
