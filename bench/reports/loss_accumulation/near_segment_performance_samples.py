# Source: https://github.com/deepchecks/deepchecks/pull/1341
# Report: ImageSegmentPerformance ran out of GPU and CPU memory because the model predictions it cached per batch still carried their autograd graphs ("tensors with grads cached")
# Shape: fixed as in the PR: update() detaches every prediction and label before they are cached in the state lists
# Expect: near-miss: must be silent
import typing as t

import torch


class Batch:
    def __init__(self, raw, model, device):
        self._raw = raw
        self._model = model
        self._device = device
        self._predictions = None

    @property
    def images(self):
        return self._raw[0]

    @property
    def labels(self):
        return list(self._raw[1])

    @property
    def predictions(self):
        if self._predictions is None:
            self._predictions = list(self._model(self._raw[0].to(self._device)))
        return self._predictions


class ImageSegmentPerformance:
    def __init__(self, image_properties, number_of_samples_to_infer_bins=1000):
        self.image_properties = image_properties
        self.number_of_samples_to_infer_bins = number_of_samples_to_infer_bins
        self._state: t.Dict[str, t.Any] = {}

    def initialize_run(self):
        self._state = {"samples_for_binning": [], "bins": None}

    def update(self, batch: Batch):
        predictions = [tens.detach() for tens in batch.predictions]
        labels = [tens.detach() for tens in batch.labels]
        batch_properties = [{} for _ in range(len(labels))]
        for prop in self.image_properties:
            for i, value in enumerate(prop["method"](batch.images)):
                batch_properties[i][prop["name"]] = value
        samples_for_bin: t.List = self._state["samples_for_binning"]
        if self._state["bins"] is None:
            samples_for_bin.extend(zip(labels, predictions, batch_properties))
            if len(samples_for_bin) >= self.number_of_samples_to_infer_bins:
                self._state["bins"] = self._create_bins(samples_for_bin)
        else:
            for label, pred, props in zip(labels, predictions, batch_properties):
                self._find_bin(props)["samples"].append((label, pred))

    def _create_bins(self, samples):
        bins = [{"start": -float("inf"), "stop": float("inf"), "samples": []}]
        for label, pred, _ in samples:
            bins[0]["samples"].append((label, pred))
        return bins

    def _find_bin(self, props):
        return self._state["bins"][0]


def run_check(check: ImageSegmentPerformance, loader, model, device="cuda"):
    check.initialize_run()
    for raw in loader:
        check.update(Batch(raw, model, device))
    return check._state
