# Source: https://github.com/NVlabs/Mosaic3D/pull/10
# Report: "Move InstanceSegmentationEvaluator states to CPU to prevent GPU OOM": the 3D instance-segmentation evaluator (a torchmetrics Metric with list states) kept every validation scene's pred_masks, scores, classes and GT segment/instance tensors on the GPU until compute() at epoch end, running A6000s out of memory; commit 7ccd34d passes .cpu() copies to update()
# Shape: the evaluator is a persistent module attribute whose update() appends each argument to a list state; validation_step (run by Lightning under no_grad) passes the per-scene mask/score/class tensors straight from the model's device outputs, so the whole validation set's masks accumulate on the GPU
# Expect: TML004 line 71
from typing import Any, Dict, List

import numpy as np
import torch
import torch.nn as nn
from lightning import LightningModule
from torchmetrics import Metric


class InstanceSegmentationEvaluator(Metric):
    def __init__(self, class_names: List[str], segment_ignore_index: List[int], instance_ignore_index: int):
        super().__init__()
        self.class_names = class_names
        self.segment_ignore_index = segment_ignore_index
        self.instance_ignore_index = instance_ignore_index
        self.add_state("pred_classes", default=[])
        self.add_state("pred_scores", default=[])
        self.add_state("pred_masks", default=[])
        self.add_state("gt_segment", default=[])
        self.add_state("gt_instance", default=[])

    def update(self, pred_classes, pred_scores, pred_masks, gt_segment, gt_instance):
        self.pred_classes.append(pred_classes)
        self.pred_scores.append(pred_scores)
        self.pred_masks.append(pred_masks)
        self.gt_segment.append(gt_segment)
        self.gt_instance.append(gt_instance)

    def compute(self) -> Dict[str, Any]:
        scenes = []
        for i in range(len(self.pred_classes)):
            scenes.append({
                "pred_masks": self.pred_masks[i].cpu().numpy(),
                "pred_scores": self.pred_scores[i].cpu().numpy(),
                "pred_classes": self.pred_classes[i].cpu().numpy(),
                "gt_instance": self.gt_instance[i].cpu().numpy(),
            })
        return {"map": float(np.mean([s["pred_scores"].mean() for s in scenes])) if scenes else 0.0}


class MaskLanguageLitModule(LightningModule):
    def __init__(self, net: nn.Module, class_names: List[str], ignore_label: int):
        super().__init__()
        self.net = net
        self.map_evaluator = InstanceSegmentationEvaluator(class_names, [ignore_label], ignore_label)

    def forward(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        return self.net(batch)

    def on_validation_epoch_start(self):
        self.map_evaluator.reset()

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        out_dict = self(batch)
        offsets = batch["offset"].tolist()
        start = 0
        for b, end in enumerate(offsets):
            mask_logits = out_dict["mask_logits"][b]  # [Q, N_b]
            class_logits = out_dict["class_logits"][b]  # [Q, C]
            masks = (mask_logits > 0).float()
            mask_scores = (mask_logits.sigmoid() * masks).sum(1) / (masks.sum(1) + 1e-6)
            mask_probs = mask_scores[:, None] * class_logits.softmax(-1)
            scores, classes = mask_probs.max(1)
            gt_classes = batch["segment"][start:end]
            gt_instances = batch["instance"][start:end]
            start = end
            self.map_evaluator.update(classes, scores, masks, gt_classes, gt_instances)  # expect: TML004

    def on_validation_epoch_end(self) -> None:
        results = self.map_evaluator.compute()
        self.log("val/map", results["map"], rank_zero_only=True)
        self.map_evaluator.reset()
