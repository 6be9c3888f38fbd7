# Source: https://github.com/uhh-lt/narrative-chain-embeddings/blob/5dd410b94472e6843ff4e9a17ff0c33ad864048d/eventy/runner.py
# Report: one-edit-away variant (the .item() before meter.update is dropped) of the catalyst dl.Runner for narrative-chain event embeddings: handle_batch puts the step losses in batch_metrics and feeds per-loader AdditiveMetric meters that are averaged at loader end
# Shape: the graph-attached loss tensors go straight into AdditiveMetric.update, whose self.value_sum += value * n and self.value_sq_sum += value * value * n keep every batch's graph until the meters are rebuilt at the next loader start
# Expect: TML001 line 73
from collections import defaultdict
from typing import Dict, List

import torch
from catalyst import dl


class AdditiveMetric:
    """Running mean/std of a scalar, weighted by the number of samples."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.value_sum = 0.0
        self.value_sq_sum = 0.0
        self.num_samples = 0

    def update(self, value, num_samples):
        self.value_sum += value * num_samples
        self.value_sq_sum += value * value * num_samples
        self.num_samples += num_samples
        return value

    def compute(self):
        mean = self.value_sum / max(self.num_samples, 1)
        std = max(self.value_sq_sum / max(self.num_samples, 1) - mean * mean, 0.0) ** 0.5
        return mean, std


class CustomRunner(dl.Runner):
    def __init__(self, *args, losses: List[str], class_distribution=None, **kwargs):
        self.losses = losses
        self.class_distribution = class_distribution
        super().__init__(*args, **kwargs)

    def on_loader_start(self, runner):
        super().on_loader_start(runner)
        self.class_distribution = self.class_distribution.to(self.engine.device)
        self.meters = {key: AdditiveMetric() for key in ["loss", "embedding_loss", "classification_loss"]}

    def on_batch_start(self, runner):
        self.batch_size = len(self.batch.embeddings)
        self.batch_step += self.engine.num_processes
        self.batch_metrics: Dict = defaultdict(None)

    def handle_batch(self, batch):
        on_device_batch = batch.to(self.engine.device)
        model_output = self.model(
            on_device_batch.embeddings,
            on_device_batch.subject_hot_encodings,
            on_device_batch.object_hot_encodings,
            on_device_batch.labels,
        )
        self.batch.logits = model_output.logits
        self.batch.logits_thresholded = model_output.logits / self.class_distribution
        losses = []
        if "classification" in self.losses:
            losses.append(model_output.classification_loss)
        if "embedding" in self.losses:
            losses.append(model_output.embedding_loss)
        loss = torch.stack(losses).mean()
        self.batch_metrics.update({
            "loss": loss,
            "embedding_loss": model_output.embedding_loss,
            "classification_loss": model_output.classification_loss,
        })
        for key in ["loss", "embedding_loss", "classification_loss"]:
            self.meters[key].update(self.batch_metrics[key], self.batch_size)  # expect: TML001
        if self.is_train_loader:
            self.engine.backward(loss)
            self.optimizer.step()
            self.optimizer.zero_grad()

    def on_loader_end(self, runner):
        self.loader_metrics["loss"] = self.meters["loss"].compute()[0]
        super().on_loader_end(runner)
