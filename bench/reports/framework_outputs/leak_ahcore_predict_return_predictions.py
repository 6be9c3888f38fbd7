# Source: https://github.com/NKI-AI/ahcore/pull/37
# Report: whole-slide-image inference ran out of memory in the predict loop because Lightning keeps every predict_step output for the epoch (trainer.predict returns them); passing return_predictions=False fixed it
# Shape: predict_step returns a dict with the CUDA prediction tiles plus batch metadata; inference() calls trainer.predict with the default return_predictions, while a writer callback already consumes each batch
# Expect: TML017 line 59
from typing import Any

import pytorch_lightning as pl
import torch
import torch.nn as nn


class AhCoreLightningModule(pl.LightningModule):
    RELEVANT_KEYS = ["coordinates", "mpp", "path", "region_index", "grid_local_coordinates", "grid_index"]

    def __init__(self, model: nn.Module, augmentations: dict | None = None):
        super().__init__()
        self._model = model
        self._augmentations = augmentations or {}

    def forward(self, sample):
        return self._model(sample)

    def _get_inference_prediction(self, image: torch.Tensor) -> dict[str, torch.Tensor]:
        logits = self._model(image)
        return {"prediction": logits.softmax(dim=1)}

    def predict_step(self, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> Any:
        if "predict" in self._augmentations:
            batch = self._augmentations["predict"](batch)
        relevant = {k: v for k, v in batch.items() if k in self.RELEVANT_KEYS}
        batch = {**batch, **self._get_inference_prediction(batch["image"])}
        filename = batch["path"][0]
        if any(filename != f for f in batch["path"]):
            raise ValueError("Filenames are not constant across the batch.")
        return {"prediction": batch["prediction"], **relevant}


class WriteTiffCallback(pl.Callback):
    def __init__(self, writer_factory):
        self._writer_factory = writer_factory
        self._writers = {}

    def on_predict_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        path = outputs["path"][0]
        if path not in self._writers:
            self._writers[path] = self._writer_factory(path)
        self._writers[path].write_tiles(outputs["prediction"].cpu().numpy(), outputs["coordinates"])

    def on_predict_epoch_end(self, trainer, pl_module):
        for writer in self._writers.values():
            writer.finalize()
        self._writers.clear()


def inference(model: nn.Module, datamodule: pl.LightningDataModule, writer_factory, devices=1):
    module = AhCoreLightningModule(model)
    trainer = pl.Trainer(accelerator="gpu", devices=devices, callbacks=[WriteTiffCallback(writer_factory)], logger=False)
    ckpt = datamodule.hparams.get("checkpoint") if hasattr(datamodule, "hparams") else None
    trainer.predict(module, datamodule=datamodule, ckpt_path=ckpt)  # expect: TML017
    return trainer
