# Source: https://github.com/datamol-io/graphium/pull/61
# Report: fixed version from the PR (commit 24d70c6d "Fixed memory leak"): _general_step computes the loss itself and moves preds/targets to CPU with .detach() before they go into the step dict
# Shape: the dict Lightning keeps per step now holds only detached CPU preds/targets and a detached loss copy; only the "loss" key (detached by the framework) stays attached
# Expect: near-miss: must be silent

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

    def get_metrics_logs(self, preds: Tensor, targets: Tensor, weights: Optional[Tensor], step_name: str, loss: Tensor):
        targets = targets.to(dtype=preds.dtype, device=preds.device)

        metric_logs = {}
        metric_logs[f"mean_pred/{step_name}"] = nan_mean(preds)
        metric_logs[f"std_pred/{step_name}"] = nan_std(preds)
        for key, metric in self.metrics.items():
            try:
                metric_logs[f"{key}/{step_name}"] = metric(preds, targets)
            except Exception:
                metric_logs[f"{key}/{step_name}"] = torch.as_tensor(float("nan"))

        metric_logs[f"{self.loss_fun._get_name()}/{step_name}"] = loss.detach().cpu()
        metric_logs = {key: metric.detach().cpu() for key, metric in metric_logs.items()}
        return metric_logs

    def _general_step(self, batch: Dict[str, Tensor], batch_idx: int, step_name: str):
        preds = self.forward(batch)
        targets = batch.pop("labels").to(dtype=preds.dtype)
        weights = batch.pop("weights", None)
        loss = self.compute_loss(preds, targets, weights)

        preds = preds.detach().cpu()
        targets = targets.detach().cpu()
        if weights is not None:
            weights = weights.detach().cpu()
        step_dict = {"preds": preds, "targets": targets, "weights": weights}
        return loss, step_dict

    def training_step(self, batch: Dict[str, Tensor], batch_idx: int) -> Dict[str, Any]:
        loss, step_dict = self._general_step(batch=batch, batch_idx=batch_idx, step_name="train")
        metrics_logs = self.get_metrics_logs(
            step_dict["preds"], step_dict["targets"], step_dict["weights"], step_name="train", loss=loss
        )
        step_dict.update(metrics_logs)
        step_dict["loss"] = loss
        self.logger.log_metrics(metrics_logs, step=self.global_step)
        return step_dict

    def _general_epoch_end(self, outputs: List[Dict[str, Any]], step_name: str):
        preds = torch.cat([out["preds"] for out in outputs], dim=0)
        targets = torch.cat([out["targets"] for out in outputs], dim=0)
        loss = self.compute_loss(preds, targets, None)
        return self.get_metrics_logs(preds, targets, None, step_name=step_name, loss=loss)

    def training_epoch_end(self, outputs: List[Dict[str, Any]]):
        self._general_epoch_end(outputs=outputs, step_name="train")

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
