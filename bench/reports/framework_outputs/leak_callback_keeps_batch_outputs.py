# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/8583
# Report: a callback overriding on_validation_batch_end / on_validation_epoch_end to compute metrics and log validation outputs to an external service made Lightning store outputs, and memory leaked.
# Shape: the callback's batch-end hook appends the step's output dict (device tensors) to a list attribute of the callback that is never emptied.
# Expect: TML004 line 15
import pytorch_lightning as pl
import torch


class ExternalReportCallback(pl.Callback):
    def __init__(self, client):
        self.client = client
        self.collected = []

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        self.collected.append(outputs["probs"])  # expect: TML004

    def on_validation_epoch_end(self, trainer, pl_module):
        probs = torch.cat(self.collected)
        self.client.send({"epoch": trainer.current_epoch, "mean_conf": probs.max(-1).values.mean().item()})


class Classifier(pl.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        self.log("val_loss", torch.nn.functional.cross_entropy(logits, y))
        return {"probs": logits.softmax(-1)}

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
