# Source: https://github.com/datamol-io/graphium/pull/61
# Report: PR "fixing GPU memory leaks" (commit 24d70c6d "Fixed memory leak"): training_step returned a step dict holding the graph-attached preds (and an undetached loss copy), which Lightning kept for every step until training_epoch_end
# Shape: _general_step builds {"preds": preds, ...} from the forward output; training_step adds the loss and returns the dict, and Lightning stores each returned dict in the epoch's outputs list
# Expect: TML017 line 73

from typing import Any, Dict, List, Optional

import torch
from torch import Tensor
import pytorch_lightning as pl

from goli.utils.tensor import nan_mean, nan_std


class PredictorModule(pl.LightningModule):
    def __init__(self, model: torch.nn.Module, loss_fun, metrics: Dict[str, Any], target_nan_mask=None):
        super().__init__()
        self.model = model
        self.loss_fun = loss_fun
        self.metrics = metrics
        self.target_nan_mask = target_nan_mask

    def forward(self, inputs: Dict[str, Tensor]) -> Tensor:
        out = self.model(inputs["features"])
        if out.ndim == 1:
            out = out.unsqueeze(-1)
        return out

    def compute_loss(self, preds: Tensor, targets: Tensor, weights: Optional[Tensor]) -> Tensor:
        if self.target_nan_mask == "ignore":
            nans = torch.isnan(targets)
            targets, preds = targets[~nans], preds[~nans]
        elif isinstance(self.target_nan_mask, (int, float)):
            targets = targets.clone()
            targets[torch.isnan(targets)] = self.target_nan_mask
        if weights is None:
            return self.loss_fun(preds, targets)
        return self.loss_fun(preds, targets, weights=weights)

    def get_metrics_logs(self, preds: Tensor, targets: Tensor, weights: Optional[Tensor], step_name: str):
        targets = targets.to(dtype=preds.dtype, device=preds.device)
        loss = self.compute_loss(preds, targets, weights)

        metric_logs = {}
        metric_logs[f"mean_pred/{step_name}"] = nan_mean(preds)
        metric_logs[f"std_pred/{step_name}"] = nan_std(preds)
        for key, metric in self.metrics.items():
            try:
                metric_logs[f"{key}/{step_name}"] = metric(preds, targets)
            except Exception:
                metric_logs[f"{key}/{step_name}"] = torch.as_tensor(float("nan"))

        # Convert all metrics to CPU, except for the loss
        metric_logs = {key: metric.detach().cpu() for key, metric in metric_logs.items()}
        metric_logs[f"{self.loss_fun._get_name()}/{step_name}"] = loss
        return loss, metric_logs

    def _general_step(self, batch: Dict[str, Tensor], batch_idx: int) -> Dict[str, Any]:
        y = batch.pop("labels")
        weights = batch.pop("weights", None)
        preds = self.forward(batch)
        step_dict = {"preds": preds, "targets": y, "weights": weights}
        return step_dict

    def training_step(self, batch: Dict[str, Tensor], batch_idx: int) -> Dict[str, Any]:
        step_dict = self._general_step(batch=batch, batch_idx=batch_idx)
        loss, metrics_logs = self.get_metrics_logs(
            step_dict["preds"], step_dict["targets"], step_dict["weights"], step_name="train"
        )
        step_dict.update(metrics_logs)
        step_dict["loss"] = loss
        self.logger.log_metrics(metrics_logs, step=self.global_step)
        return step_dict  # expect: TML017

    def _general_epoch_end(self, outputs: List[Dict[str, Any]], step_name: str):
        preds = torch.cat([out["preds"] for out in outputs], dim=0)
        targets = torch.cat([out["targets"] for out in outputs], dim=0)
        loss, metrics_logs = self.get_metrics_logs(preds, targets, None, step_name=step_name)
        return metrics_logs

    def training_epoch_end(self, outputs: List[Dict[str, Any]]):
        self._general_epoch_end(outputs=outputs, step_name="train")

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
