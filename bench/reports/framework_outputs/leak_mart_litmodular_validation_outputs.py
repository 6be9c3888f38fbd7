# Source: https://github.com/IntelLabs/MART/blob/01e3db8e0cd45d0e5b1075c3fd974f42e4d01607/mart/models/modular.py
# Report: LitModular's validation_step/test_step return the whole output dict (preds, target on the GPU); the authors had to call output.clear() in *_step_end "to prevent CUDA memory leak in validation and test", because Lightning 1.x keeps every returned step output for *_epoch_end.
# Shape: repository code with the safeguard removed: validation_step_end no longer clears the dict, so Lightning's epoch loop keeps every batch's GPU preds/target until validation_epoch_end.
# Expect: TML017 line 48
import logging

import torch
from pytorch_lightning import LightningModule

logger = logging.getLogger(__name__)


class LitModular(LightningModule):
    def __init__(self, model, optimizer, training_metrics=None, validation_metrics=None,
                 training_step_log=None, validation_step_log=None):
        super().__init__()
        self.model = model
        self.optimizer = optimizer
        self.training_metrics = training_metrics
        self.validation_metrics = validation_metrics
        self.training_step_log = training_step_log or ["loss"]
        self.validation_step_log = validation_step_log or []

    def configure_optimizers(self):
        return self.optimizer(self.model)

    def forward(self, **kwargs):
        return self.model(**kwargs)

    def training_step(self, batch, batch_idx):
        input, target = batch
        output = self(input=input, target=target, step="training")
        for name in self.training_step_log:
            self.log(f"training/{name}", output[name])
        return output

    def training_step_end(self, output):
        if self.training_metrics is not None:
            self.training_metrics(output["preds"], output["target"])
        loss = output.pop("loss")
        return loss

    def validation_step(self, batch, batch_idx):
        input, target = batch
        output = self(input=input, target=target, step="validation")
        for name in self.validation_step_log:
            self.log(f"validation/{name}", output[name])
        return output  # expect: TML017

    def validation_step_end(self, output):
        # metrics are updated per batch; the dict itself is handed back to the loop
        self.validation_metrics(output["preds"], output["target"])
        return output

    def validation_epoch_end(self, outputs):
        metrics = self.validation_metrics.compute()
        metrics = self.flatten_metrics(metrics)
        self.validation_metrics.reset()
        self.log_dict({f"validation_metrics/{k}": v for k, v in metrics.items()})

    def flatten_metrics(self, metrics):
        flat = {}
        for k, v in metrics.items():
            if isinstance(v, dict):
                for k2, v2 in self.flatten_metrics(v).items():
                    if k2 in flat:
                        logger.warning(f"{k}/{k2} overrides existing metric!")
                    flat[k2] = v2
            elif isinstance(v, torch.Tensor):
                flat[k] = v
        return flat
