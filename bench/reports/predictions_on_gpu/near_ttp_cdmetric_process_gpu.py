# Source: https://github.com/KyanChen/TTP/issues/5
# Report: the fix the maintainer gives for GPU memory accumulating during validation/inference: offload pred and gt to the CPU inside the metric
# Shape: CDMetric.process() still keeps every mask on self.results for the whole set, but as CPU copies (.cpu() on pred and gt), so device memory stays flat; the loop runs under no_grad
# Expect: near-miss: must be silent
from collections import OrderedDict

import torch
import torch.nn as nn
from torchmetrics.functional.classification import (binary_accuracy, multiclass_f1_score,
                                                    multiclass_jaccard_index)


class CDMetric:
    """Change-detection metric: collects every mask, scores them at the end."""

    def __init__(self, class_names, ignore_index=255):
        self.class_names = class_names
        self.ignore_index = ignore_index
        self.results = []

    def process(self, data_batch, data_samples):
        for sample in data_samples:
            pred_label = sample["pred_sem_seg"].squeeze()
            gt_label = sample["gt_sem_seg"].squeeze().to(pred_label)
            self.results.append((pred_label.cpu(), gt_label.cpu()))

    def compute_metrics(self, results):
        preds, target = zip(*results)
        preds, target = torch.stack(preds), torch.stack(target)
        n = len(self.class_names)
        f1 = multiclass_f1_score(preds, target, num_classes=n, average=None,
                                 ignore_index=self.ignore_index)
        iou = multiclass_jaccard_index(preds, target, num_classes=n, average=None,
                                       ignore_index=self.ignore_index)
        out = OrderedDict(macc=binary_accuracy(preds, target, ignore_index=self.ignore_index).item())
        for i, name in enumerate(self.class_names):
            out[f"f1_{name}"] = f1[i].item()
            out[f"iou_{name}"] = iou[i].item()
        return out

    def evaluate(self):
        metrics = self.compute_metrics(self.results)
        self.results.clear()
        return metrics


class SiamChangeDetector(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    def forward(self, img_a, img_b):
        return self.decoder(self.encoder(img_a), self.encoder(img_b))

    def val_step(self, data_batch):
        img_a = data_batch["img_a"].cuda(non_blocking=True)
        img_b = data_batch["img_b"].cuda(non_blocking=True)
        logits = self(img_a, img_b)
        preds = logits.argmax(dim=1, keepdim=True)
        return [{"pred_sem_seg": p, "gt_sem_seg": g}
                for p, g in zip(preds, data_batch["gt_sem_seg"])]


class ValLoop:
    def __init__(self, model, dataloader, metric):
        self.model = model
        self.dataloader = dataloader
        self.metric = metric

    @torch.no_grad()
    def run(self):
        self.model.eval()
        for data_batch in self.dataloader:
            outputs = self.model.val_step(data_batch)
            self.metric.process(data_batch, outputs)
        return self.metric.evaluate()
