# Source: https://github.com/DeepLabCut/DeepLabCut/pull/3099
# Report: Video pose inference got slower as batch size grew: each frame's inputs were added to the pending batch with torch.cat, re-copying the whole batch every frame (O(n^2) copies, allocator churn); fixed by collecting a list and stacking once per batch.
# Shape: _prepare_inputs, called once per frame from the inference loop, rebinds self._batch = torch.cat([self._batch, inputs]) so the pending batch is copied again for every frame.
# Expect: TML008 line 47
from typing import Iterable

import numpy as np
import torch
from torch import nn


class PoseInferenceRunner:
    def __init__(self, model: nn.Module, batch_size: int = 64, device: str = "cuda", preprocessor=None):
        self.model = model
        self.batch_size = batch_size
        self.device = device
        self.preprocessor = preprocessor
        self._batch = None
        self._items_per_frame = []
        self._predictions = []

    @torch.no_grad()
    def inference(self, frames: Iterable[np.ndarray]) -> list:
        self.model.to(self.device).eval()
        results = []
        for frame in frames:
            self._prepare_inputs(frame)
            while self._batch is not None and len(self._batch) >= self.batch_size:
                self._process_batch()
            results += self._collect()
        if self._batch is not None and len(self._batch) > 0:
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
        if self._batch is None:
            self._batch = inputs
        else:
            self._batch = torch.cat([self._batch, inputs], dim=0)  # expect: TML008

    def _process_batch(self) -> None:
        batch = self._batch[: self.batch_size]
        heatmaps = self.model(batch.to(self.device))
        self._predictions += [h.cpu().numpy() for h in heatmaps]
        rest = self._batch[self.batch_size:]
        self._batch = rest if len(rest) > 0 else None

    def _collect(self) -> list:
        out = []
        while self._items_per_frame and len(self._predictions) >= self._items_per_frame[0]:
            n = self._items_per_frame.pop(0)
            out.append(self._predictions[:n])
            self._predictions = self._predictions[n:]
        return out
