# Source: https://github.com/DeepLabCut/DeepLabCut/pull/3099
# Report: Video pose inference got slower as batch size grew: each frame's inputs were added to the pending batch with torch.cat, re-copying the whole batch every frame (O(n^2) copies, allocator churn); fixed by collecting a list and stacking once per batch.
# Shape: fixed version: each frame's inputs are appended to a Python list (CPU tensors, counted in self._pending); parts are taken off the list and concatenated once when a batch is formed.
# Expect: near-miss: must be silent
from typing import Iterable, List

import numpy as np
import torch
from torch import nn


class PoseInferenceRunner:
    def __init__(self, model: nn.Module, batch_size: int = 64, device: str = "cuda", preprocessor=None):
        self.model = model
        self.batch_size = batch_size
        self.device = device
        self.preprocessor = preprocessor
        self._batch_list: List[torch.Tensor] = []
        self._pending = 0
        self._items_per_frame = []
        self._predictions = []

    @torch.no_grad()
    def inference(self, frames: Iterable[np.ndarray]) -> list:
        self.model.to(self.device).eval()
        results = []
        for frame in frames:
            self._prepare_inputs(frame)
            while self._pending >= self.batch_size:
                self._process_batch()
            results += self._collect()
        if self._pending > 0:
            self._process_batch()
            results += self._collect()
        return results

    def _prepare_inputs(self, frame: np.ndarray) -> None:
        if self.preprocessor is not None:
            inputs = self.preprocessor(frame)
        else:
            inputs = torch.as_tensor(frame).permute(2, 0, 1)[None].float() / 255.0
        self._items_per_frame.append(len(inputs))
        if len(inputs) == 0:
            return
        self._batch_list.append(inputs)
        self._pending += len(inputs)

    def _process_batch(self) -> None:
        parts, taken = [], 0
        while self._batch_list and taken < self.batch_size:
            part = self._batch_list.pop(0)
            need = self.batch_size - taken
            if len(part) > need:
                self._batch_list.insert(0, part[need:])
                part = part[:need]
            parts.append(part)
            taken += len(part)
        self._pending -= taken
        batch = torch.cat(parts, dim=0)
        heatmaps = self.model(batch.to(self.device))
        self._predictions += [h.cpu().numpy() for h in heatmaps]

    def _collect(self) -> list:
        out = []
        while self._items_per_frame and len(self._predictions) >= self._items_per_frame[0]:
            n = self._items_per_frame.pop(0)
            out.append(self._predictions[:n])
            self._predictions = self._predictions[n:]
        return out
