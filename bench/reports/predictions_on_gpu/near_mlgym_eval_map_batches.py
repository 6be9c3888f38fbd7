# Source: https://github.com/mlgym/mlgym/pull/7
# Report: the fix in the PR: forward_batch moves every InferenceResultBatch to a result device (the CPU) right after inference, so only one batch at a time lives on the GPU
# Shape: map_batches still collects one result per batch, but each result was moved to the CPU inside forward_batch (no_grad outputs, then .to(cpu)), so the list grows in host memory only
# Expect: near-miss: must be silent
from typing import Any, Callable, Dict, List

import torch
import tqdm


class InferenceResultBatch:
    """Targets and predictions of one batch."""

    def __init__(self, targets: Dict[str, torch.Tensor], predictions: Dict[str, torch.Tensor], tags: torch.Tensor):
        self._targets = targets
        self._predictions = predictions
        self._tags = tags

    def to_device(self, device: torch.device):
        self._predictions = {k: v.to(device) for k, v in self._predictions.items()}
        self._targets = {k: v.to(device) for k, v in self._targets.items()}
        self._tags = self._tags.to(device)

    @property
    def predictions(self):
        return self._predictions

    @property
    def targets(self):
        return self._targets

    @staticmethod
    def combine(batches: List["InferenceResultBatch"]) -> "InferenceResultBatch":
        preds = {k: torch.cat([b.predictions[k] for b in batches]) for k in batches[0].predictions}
        targets = {k: torch.cat([b.targets[k] for b in batches]) for k in batches[0].targets}
        tags = torch.cat([b._tags for b in batches])
        return InferenceResultBatch(targets=targets, predictions=preds, tags=tags)


class InferenceComponent:
    def __init__(self, prediction_key: str, target_key: str):
        self.prediction_key = prediction_key
        self.target_key = target_key

    def predict(self, model: torch.nn.Module, batch) -> InferenceResultBatch:
        outputs = model(batch.samples)
        return InferenceResultBatch(targets={self.target_key: batch.targets},
                                    predictions={self.prediction_key: outputs},
                                    tags=batch.tags)


class EvalComponent:
    def __init__(self, inference_component: InferenceComponent, metrics: Dict[str, Callable],
                 loss_funs: Dict[str, Callable], dataset_loaders: Dict[str, Any], show_progress: bool = False):
        self.inference_component = inference_component
        self.metrics = metrics
        self.loss_funs = loss_funs
        self.dataset_loaders = dataset_loaders
        self.show_progress = show_progress

    def evaluate(self, model: torch.nn.Module, device: torch.device) -> List[Dict[str, Any]]:
        return [self.evaluate_dataset_split(model, device, split, loader)
                for split, loader in self.dataset_loaders.items()]

    def evaluate_dataset_split(self, model, device, split_name, dataset_loader) -> Dict[str, Any]:
        prediction_batches = self.map_batches(fun=self.forward_batch,
                                              loader=dataset_loader,
                                              fun_params={"device": device, "model": model},
                                              show_progress=self.show_progress)
        prediction_batch = InferenceResultBatch.combine(prediction_batches)
        losses = {key: fun(prediction_batch).detach().mean().item() for key, fun in self.loss_funs.items()}
        metrics = {tag: fun(prediction_batch) for tag, fun in self.metrics.items()}
        return {"split": split_name, "losses": losses, "metrics": metrics}

    @staticmethod
    def map_batches(fun: Callable[..., InferenceResultBatch], loader,
                    fun_params: Dict[str, Any] = None, show_progress: bool = False) -> List[InferenceResultBatch]:
        fun_params = fun_params if fun_params is not None else dict()
        batches = tqdm.tqdm(loader, desc="Batches processed:") if show_progress else loader
        return [fun(batch, **fun_params) for batch in batches]

    def forward_batch(self, batch, model: torch.nn.Module, device: torch.device,
                      result_device: torch.device = torch.device("cpu")) -> InferenceResultBatch:
        batch.to_device(device)
        model.to(device)
        with torch.no_grad():
            predict_result = self.inference_component.predict(model, batch)
        predict_result.to_device(result_device)
        return predict_result
