# Source: https://github.com/project-lighter/lighter/pull/106
# Report: Lightning predict loop accumulated every predict_step output while a writer callback already wrote them to disk
# Shape: same system and writer, but trainer.predict(..., return_predictions=False) so the framework keeps nothing between batches
# Expect: near-miss: must be silent
from pathlib import Path

import pytorch_lightning as pl
import torch
from pytorch_lightning.callbacks import BasePredictionWriter


class LighterSystem(pl.LightningModule):
    def __init__(self, model, postprocessing=None):
        super().__init__()
        self.model = model
        self.postprocessing = postprocessing or (lambda x: x)

    def forward(self, x):
        return self.model(x)

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        input_, _, identifier = batch["input"], batch.get("target"), batch.get("id")
        pred = self.postprocessing(self(input_))
        return {"pred": pred, "identifier": identifier}


class FileWriter(BasePredictionWriter):
    """Writes each batch of predictions to disk as soon as it is produced."""

    def __init__(self, directory):
        super().__init__(write_interval="batch")
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    def write_on_batch_end(self, trainer, pl_module, prediction, batch_indices, batch, batch_idx, dataloader_idx):
        for i, (pred, ident) in enumerate(zip(prediction["pred"], prediction["identifier"])):
            name = ident if ident is not None else f"{batch_idx}_{i}"
            torch.save(pred.detach().cpu(), self.directory / f"{name}.pt")


def run_predict(model, datamodule, out_dir, devices=1):
    system = LighterSystem(model, postprocessing=lambda x: torch.sigmoid(x))
    trainer = pl.Trainer(
        accelerator="gpu",
        devices=devices,
        callbacks=[FileWriter(out_dir)],
        logger=False,
        enable_checkpointing=False,
    )
    trainer.predict(system, datamodule=datamodule, return_predictions=False)
    return out_dir
