"""A Lightning callback that keeps the first layer's weight norm after every training batch
(`on_train_batch_end`), computed with autograd on: each kept norm keeps its graph (the norm and
the weight's AccumulateGrad). The LightningModule itself is correct; the finding is in the
callback, whose hook Lightning calls once per step. (The linter does not flag it yet: a store in
a callback hook of a norm that autograd records; tests/verify/test_verify_frameworks.py makes the
finding by hand.)"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class NormHistory(L.Callback):
    def __init__(self):
        self.norms = []

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.norms.append(pl_module.net[0].weight.norm())


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    data = TensorDataset(torch.randn(512, 32), torch.randint(0, 10, (512,)))
    trainer = L.Trainer(max_epochs=3, callbacks=[NormHistory()])
    trainer.fit(Classifier(), DataLoader(data, batch_size=16))
