# Source: https://github.com/Substra/substrafl/pull/171
# Report: TorchAlgo._local_predict grew a device tensor with torch.cat((predictions, model(x)), 0) per batch; the PR keeps outputs in a list and concatenates once (source note: substrafl/algorithms/pytorch/torch_base_algo.py, fixed after commit 011c6106e8abb837027c41a68dc14e82d52b3cc5)
# Shape: each batch's output (from a helper, under inference_mode) is moved to the CPU and appended to a list; torch.cat runs once after the loop
# Expect: near-miss: must be silent
import shutil

import numpy as np
import torch


class BatchSizeNotFoundError(Exception):
    pass


class TorchAlgo:
    def __init__(self, model, criterion, index_generator, dataset, use_gpu=True):
        self._device = self._get_torch_device(use_gpu)
        self._model = model.to(self._device)
        self._criterion = criterion
        self._index_generator = index_generator
        self._dataset = dataset

    def _get_torch_device(self, use_gpu):
        device = torch.device("cpu")
        if use_gpu and torch.cuda.is_available():
            device = torch.device("cuda")
        return device

    def _save_predictions(self, predictions, predictions_path):
        if predictions_path is not None:
            np.save(predictions_path, predictions)
            shutil.move(str(predictions_path) + ".npy", predictions_path)

    def _forward_batch(self, x):
        x = x.to(self._device)
        return self._model(x)

    def _local_predict(self, predict_dataset, predictions_path):
        if self._index_generator is None:
            raise BatchSizeNotFoundError("no default batch size for local prediction")
        predict_loader = torch.utils.data.DataLoader(
            predict_dataset, batch_size=self._index_generator.batch_size
        )

        self._model.eval()

        predictions = []
        with torch.inference_mode():
            for x in predict_loader:
                y_hat = self._forward_batch(x)
                predictions.append(y_hat.cpu())
        predictions = torch.cat(predictions, 0)  # only one cat, after the loop

        self._save_predictions(predictions, predictions_path)

    def predict(self, datasamples, shared_state=None, predictions_path=None):
        predict_dataset = self._dataset(datasamples, is_inference=True)
        self._local_predict(predict_dataset=predict_dataset, predictions_path=predictions_path)
