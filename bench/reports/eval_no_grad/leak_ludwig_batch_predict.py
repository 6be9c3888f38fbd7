# Source: https://github.com/ludwig-ai/ludwig/pull/1739
# Report: Ludwig's Predictor ran batch prediction with grad enabled, so every batch's forward built an autograd graph and the per-batch predictions (tensors that require grad) kept those graphs alive until the final concat; the PR wraps batch predict in torch.no_grad to reduce memory pressure.
# Shape: batch_predict switches the model to eval() and loops over the batcher; the forward happens in the _predict helper, and _accumulate_preds appends each graph-attached prediction tensor to a dict of lists created before the loop.
# Expect: TML003 line 36; TML001 line 42
from collections import defaultdict

import numpy as np
import torch

EXCLUDE_PRED_SET = {"logits", "last_hidden"}


class Predictor:
    def __init__(self, batch_size=128, device=None):
        self._batch_size = batch_size
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")

    def batch_predict(self, model, dataset, dataset_name=None):
        prev_training_mode = model.training
        model.eval()
        with dataset.initialize_batcher(self._batch_size, should_shuffle=False) as batcher:
            predictions = defaultdict(list)
            while not batcher.last_batch():
                batch = batcher.next_batch()
                preds = self._predict(model, batch)
                self._accumulate_preds(preds, predictions)
        self._concat_preds(predictions)
        model.train(prev_training_mode)
        return predictions

    def _predict(self, model, batch):
        inputs = {
            feat.feature_name: torch.from_numpy(np.array(batch[feat.proc_column], copy=True)).to(self.device)
            for feat in model.input_features.values()
        }
        return model.predict_step(inputs)  # expect: TML003

    def _accumulate_preds(self, preds, predictions):
        for of_name, of_preds in preds.items():
            for pred_name, pred_values in of_preds.items():
                if pred_name not in EXCLUDE_PRED_SET:
                    predictions[f"{of_name}_{pred_name}"].append(pred_values)  # expect: TML001

    def _concat_preds(self, predictions):
        for key, pred_value_list in predictions.items():
            # the stacked values still require grad, hence the clone/detach before numpy
            predictions[key] = torch.cat(pred_value_list, dim=0).clone().detach().cpu().numpy()
