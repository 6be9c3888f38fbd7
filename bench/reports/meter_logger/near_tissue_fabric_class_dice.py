# Source: https://github.com/sabeenlohawala/tissue_labeling/blob/main/TissueLabeling/training/trainer.py
# Report: Fabric segmentation trainer (TissueLabeling) feeds every batch into a Classification_Metrics meter; the fix detaches the per-class Dice (returned by the same torchmetrics Dice that serves as the loss) before it is summed into the meter
# Shape: loss and overall Dice reach the meter as .item() floats, class_dice as a detached tensor whose .cpu() copy carries no graph; validation runs under @torch.no_grad(), so its class_dice is detached already
# Expect: near-miss: must be silent
import lightning as L
import torch
import torch.nn.functional as F
from torchmetrics import Metric


class Dice(Metric):
    """Generalized Dice; used both as the loss (is_loss=True) and as the metric."""

    def __init__(self, nr_of_classes, is_loss=False, class_specific_scores=False):
        super().__init__()
        self.add_state("class_dice", default=torch.zeros(nr_of_classes), dist_reduce_fx="mean")
        self.add_state("dice", default=torch.zeros(1), dist_reduce_fx="mean")
        self.nr_of_classes = nr_of_classes
        self.smooth = 1e-7
        self.is_loss = is_loss
        self.class_specific_scores = class_specific_scores

    def update(self, target, preds):
        onehot = F.one_hot(target.squeeze(1), num_classes=self.nr_of_classes).permute(0, 3, 1, 2)
        inter = torch.sum(onehot * preds, dim=(2, 3))
        union = torch.sum(onehot + preds, dim=(2, 3))
        self.class_dice = 2.0 * (inter.mean(0) + self.smooth) / (union.mean(0) + self.smooth)
        self.dice = self.class_dice.mean()

    def compute(self):
        score = 1 - self.dice if self.is_loss else self.dice
        if self.class_specific_scores:
            return score, self.class_dice
        return score


class ClassificationMetrics:
    """Keeps the per-batch loss/metric of one split until the epoch is logged."""

    def __init__(self, nr_of_classes, prefix):
        self.prefix = prefix
        self.nr_of_classes = nr_of_classes
        self.reset()

    def compute(self, loss, metric, class_dice=None):
        self.loss.append(loss)
        self.metric.append(metric)
        if class_dice is not None:
            self.class_dice = self.class_dice + class_dice.cpu()

    def summary(self):
        n = max(len(self.loss), 1)
        out = {f"{self.prefix}/loss": sum(self.loss) / n, f"{self.prefix}/dice": sum(self.metric) / n}
        for i in range(self.nr_of_classes):
            out[f"{self.prefix}/class_dice/{i}"] = self.class_dice[i].item() / n
        return out

    def reset(self):
        self.loss = []
        self.metric = []
        self.class_dice = torch.zeros((self.nr_of_classes,), device="cpu")


class Trainer:
    def __init__(self, model, train_loader, val_loader, loss_fn, metric, optimizer, fabric, num_epochs):
        self.model = model
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.loss_fn = loss_fn
        self.metric = metric
        self.optimizer = optimizer
        self.fabric = fabric
        self.num_epochs = num_epochs
        n = metric.nr_of_classes
        self.train_metrics = ClassificationMetrics(n, prefix="Train")
        self.validation_metrics = ClassificationMetrics(n, prefix="Validation")

    def train_and_validate(self):
        for epoch in range(1, self.num_epochs + 1):
            self._train()
            self._validation()
            self.fabric.barrier()
            self.fabric.print(epoch, self.train_metrics.summary(), self.validation_metrics.summary())
            self.train_metrics.reset()
            self.validation_metrics.reset()

    def _train(self):
        self.model.train()
        for image, mask in self.train_loader:
            self.optimizer.zero_grad()
            probs = self.model(image.to(torch.float32))
            loss = self.loss_fn(mask.long(), probs)
            self.fabric.backward(loss)
            self.optimizer.step()

            overall_dice, class_dice = self.metric(mask.long(), probs)
            self.train_metrics.compute(loss=loss.item(), metric=overall_dice.item(), class_dice=class_dice.detach())

    @torch.no_grad()
    def _validation(self):
        self.model.eval()
        for image, mask in self.val_loader:
            probs = self.model(image)
            loss = self.loss_fn(mask.long(), probs)
            overall_dice, class_dice = self.metric(mask.long(), probs)
            self.validation_metrics.compute(loss=loss.item(), metric=overall_dice.item(), class_dice=class_dice)


def main(model, train_loader, val_loader, nr_of_classes=7, num_epochs=20):
    fabric = L.Fabric(accelerator="cuda", devices=1)
    fabric.launch()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model, optimizer = fabric.setup(model, optimizer)
    train_loader, val_loader = fabric.setup_dataloaders(train_loader, val_loader)
    loss_fn = fabric.to_device(Dice(nr_of_classes, is_loss=True))
    metric = fabric.to_device(Dice(nr_of_classes, class_specific_scores=True))
    Trainer(model, train_loader, val_loader, loss_fn, metric, optimizer, fabric, num_epochs).train_and_validate()
