# Source: https://github.com/microsoft/InnerEye-DeepLearning/pull/209
# Report: every minibatch's ModelForwardAndBackwardsOutputs (logits, labels) was kept in ModelOutputsAndMetricsForEpoch.model_outputs; persisting these outputs could run the job out of memory (source note: InnerEye/ML/model_training_steps.py, commit 7c89f0393beddabe3233cc3721a39dfd234ce3e4)
# Shape: the step helper packs the no_grad logits and the labels, still on the GPU, into a dataclass; the epoch loop appends every result to model_outputs
# Expect: TML004 line 71
from dataclasses import dataclass
from typing import Any, Dict, List

import torch
from torch import Tensor


@dataclass
class ModelForwardAndBackwardsOutputs:
    loss: float
    logits: Tensor
    labels: Tensor


@dataclass
class ModelOutputsAndMetricsForEpoch:
    metrics: Dict[str, float]
    model_outputs: List[ModelForwardAndBackwardsOutputs]
    is_train: bool

    def get_logits(self) -> Tensor:
        return torch.cat([x.logits for x in self.model_outputs])

    def get_labels(self) -> Tensor:
        return torch.cat([x.labels for x in self.model_outputs])


class ModelTrainingStepsForScalarModel:
    def __init__(self, model: torch.nn.Module, criterion: torch.nn.Module, device: torch.device):
        self.model = model.to(device)
        self.criterion = criterion
        self.device = device

    def get_label_tensor(self, labels: Any) -> Tensor:
        return torch.as_tensor(labels, dtype=torch.float32).to(self.device)

    def get_logits_and_posteriors(self, *model_inputs: Tensor):
        logits = self.model(*model_inputs)
        posteriors = torch.sigmoid(logits)
        return logits, posteriors

    def forward_minibatch(self, sample: Dict[str, Any], batch_index: int) -> ModelForwardAndBackwardsOutputs:
        model_inputs = [x.to(self.device) for x in sample["model_inputs"]]
        label_gpu = self.get_label_tensor(sample["labels"])
        self.model.eval()
        with torch.no_grad():
            logits, posteriors = self.get_logits_and_posteriors(*model_inputs)
        self.model.train()
        loss = self.criterion(logits, label_gpu)
        gathered_logits = logits.float()
        return ModelForwardAndBackwardsOutputs(
            loss=loss.float().item(),
            logits=gathered_logits,
            labels=label_gpu,
        )


def compute_epoch_metrics(logits: Tensor, labels: Tensor) -> Dict[str, float]:
    predicted = (torch.sigmoid(logits) > 0.5).float()
    return {"accuracy": (predicted == labels).float().mean().item()}


def run_validation_epoch(steps: ModelTrainingStepsForScalarModel, val_loader, epoch: int):
    model_outputs: List[ModelForwardAndBackwardsOutputs] = []
    for batch_index, sample in enumerate(val_loader):
        result = steps.forward_minibatch(sample, batch_index)
        model_outputs.append(result)  # expect: TML004
    epoch_results = ModelOutputsAndMetricsForEpoch(metrics={}, model_outputs=model_outputs, is_train=False)
    epoch_results.metrics = compute_epoch_metrics(epoch_results.get_logits(), epoch_results.get_labels())
    print(f"epoch {epoch}: {epoch_results.metrics}")
    return epoch_results.metrics
