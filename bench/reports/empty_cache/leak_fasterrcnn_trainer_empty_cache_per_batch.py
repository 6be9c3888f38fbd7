# Source: https://github.com/manuele09/FasterRCNN/blob/c68415f2f70bbd91a4314f7e987db352eebeb0ca/bin/model.py
# Report: audit of a Faster R-CNN trainer class: both the training loop and the inference-mode evaluation loop end every batch with `del images; del targets; torch.cuda.empty_cache()`, which frees no live memory but syncs and hands cached blocks back so the next batch pays cudaMalloc again
# Shape: FasterModel-style class with self.model/self.optimizer/self.metric_logger; the meter's update() turns tensors into floats itself; empty_cache also called in the Ctrl+C handler (outside the loop)
# Expect: TML009 line 60; TML009 line 77
import math
from collections import defaultdict, deque

import torch


class SmoothedValue:
    def __init__(self, window=20):
        self.window = deque(maxlen=window)
        self.total, self.count = 0.0, 0

    def update(self, value):
        self.window.append(value)
        self.total += value
        self.count += 1


class MetricLogger:
    def __init__(self):
        self.meters = defaultdict(SmoothedValue)

    def update(self, **kwargs):
        for name, value in kwargs.items():
            if isinstance(value, torch.Tensor):
                value = value.item()
            self.meters[name].update(value)


class FasterModel:
    def __init__(self, model, optimizer, lr_scheduler, data_loader, device="cuda"):
        self.model, self.optimizer, self.lr_scheduler = model, optimizer, lr_scheduler
        self.data_loader, self.device = data_loader, device
        self.metric_logger = MetricLogger()
        self.epoch, self.last_batch = 0, 0

    def train_one_epoch(self):
        self.model.train()
        try:
            for images, targets in self.data_loader:
                images = [img.to(self.device) for img in images]
                targets = [{k: v.to(self.device) for k, v in t.items()} for t in targets]
                loss_dict = self.model(images, targets)
                losses = sum(loss for loss in loss_dict.values())
                loss_value = losses.item()
                if not math.isfinite(loss_value):
                    print(f"Loss is {loss_value}, stopping training")
                    return
                self.optimizer.zero_grad()
                losses.backward()
                self.optimizer.step()
                self.lr_scheduler.step()
                self.metric_logger.update(loss=losses, **loss_dict)
                self.last_batch += 1
                del images
                del targets
                torch.cuda.empty_cache()  # expect: TML009
        except KeyboardInterrupt:
            print("Ctrl+C pressed, cleaning up")
            torch.cuda.empty_cache()
            return
        self.epoch += 1
        self.last_batch = 0

    @torch.inference_mode()
    def evaluate(self, data_loader, evaluator):
        self.model.eval()
        for images, targets in data_loader:
            images = [img.to(self.device) for img in images]
            outputs = self.model(images)
            outputs = [{k: v.to("cpu") for k, v in t.items()} for t in outputs]
            evaluator.update({t["image_id"].item(): out for t, out in zip(targets, outputs)})
            del images
            torch.cuda.empty_cache()  # expect: TML009
        return evaluator.summarize()
