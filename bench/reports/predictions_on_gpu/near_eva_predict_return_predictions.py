# Source: https://github.com/kaiko-ai/eva/issues/172
# Report: eva's Interface.predict called trainer.predict(model=model, datamodule=predict_datamodule); Lightning then accumulates every batch's prediction tensors in order to return them, so memory rises through the run although the EmbeddingsWriter callback already saves each batch to disk. Fix: pass return_predictions=False.
# Shape: same code; a pathology-image backbone's predict_step returns GPU embeddings; an EmbeddingsWriter (BasePredictionWriter, write_interval="batch") writes each batch out, and predict() passes return_predictions=False (the fix), so the predict loop keeps nothing between batches.
# Expect: near-miss: must be silent
import io
import os
from typing import Any, Sequence

import lightning.pytorch as pl
import torch
from lightning.pytorch import callbacks
from torch import nn


class HeadModule(pl.LightningModule):
    def __init__(self, backbone: nn.Module, head: nn.Module | None = None) -> None:
        super().__init__()
        self.backbone = backbone
        self.head = head or nn.Identity()

    def forward(self, tensor: torch.Tensor) -> torch.Tensor:
        return self.head(self.backbone(tensor))

    def predict_step(self, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> torch.Tensor:
        data, _targets, _metadata = batch
        return self(data)


class EmbeddingsWriter(callbacks.BasePredictionWriter):
    """Writes the embeddings of each predicted batch to disk."""

    def __init__(self, output_dir: str) -> None:
        super().__init__(write_interval="batch")
        self._output_dir = output_dir

    def write_on_batch_end(
        self,
        trainer: pl.Trainer,
        pl_module: pl.LightningModule,
        prediction: Any,
        batch_indices: Sequence[int],
        batch: Any,
        batch_idx: int,
        dataloader_idx: int,
    ) -> None:
        dataset = trainer.predict_dataloaders[dataloader_idx].dataset
        _, targets, _ = batch
        for local_idx, global_idx in enumerate(batch_indices[: len(prediction)]):
            save_name = os.path.splitext(dataset.filename(global_idx))[0] + ".pt"
            buffer = io.BytesIO()
            torch.save(
                {"embeddings": prediction[local_idx].clone().cpu(), "target": targets[local_idx].cpu()},
                buffer,
            )
            with open(os.path.join(self._output_dir, save_name), "wb") as f:
                f.write(buffer.getvalue())


class Interface:
    def predict(self, trainer: pl.Trainer, model: HeadModule, data: pl.LightningDataModule) -> None:
        """Computes the embeddings with a frozen foundation model and writes them to disk."""
        os.makedirs(trainer.default_root_dir, exist_ok=True)
        trainer.predict(
            model=model,
            datamodule=data,
            return_predictions=False,
        )
