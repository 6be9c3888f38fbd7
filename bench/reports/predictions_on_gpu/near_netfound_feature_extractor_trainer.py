# Source: https://github.com/cdigby/netFound-iot/blob/main/src/train/NetFoundTrainer.py
# Report: the HF Trainer subclass of the repository that dumps netFound flow embeddings: prediction_step keeps every batch's features and labels on self for dump_features()
# Shape: the forward runs under torch.no_grad() and both features and labels are moved to the host before they are appended, so the per-predict lists grow in host memory only (and are reset per split)
# Expect: near-miss: must be silent
import os
from typing import Any, Dict, List, Optional, Tuple, Union

import joblib
import torch
from transformers import Trainer


class NetfoundTrainer(Trainer):
    extraFields = {}

    def __init__(self, label_names=None, extraFields=None, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if extraFields is not None:
            self.extraFields = extraFields
        if label_names is not None:
            self.label_names.extend(label_names)

    def _set_signature_columns_if_needed(self):
        super()._set_signature_columns_if_needed()
        self._signature_columns += [
            "direction", "iats", "bytes", "pkt_count", "total_bursts", "ports", "stats", "protocol",
        ]
        self._signature_columns += list(self.extraFields)
        self._signature_columns = list(set(self._signature_columns))


class NetfoundFeatureExtractorTrainer(NetfoundTrainer):
    """Runs trainer.predict() only to collect the encoder features of every flow."""

    def __init__(self, label_names=None, extraFields=None, *args, **kwargs):
        super().__init__(label_names, extraFields, *args, **kwargs)
        self.all_features = []
        self.all_labels = []

    def prediction_step(
        self,
        model: torch.nn.Module,
        inputs: Dict[str, Union[torch.Tensor, Any]],
        prediction_loss_only: bool,
        ignore_keys: Optional[List[str]] = None,
    ) -> Tuple[Optional[torch.Tensor], Optional[torch.Tensor], Optional[torch.Tensor]]:
        model.eval()
        inputs = self._prepare_inputs(inputs)

        with torch.no_grad():
            outputs = model(**inputs)

        labels = inputs.get("labels")
        self.all_features.append(outputs.features.cpu())
        self.all_labels.append(labels.cpu())
        return (None, None, None)

    def dump_features(self, output_dir, label):
        final_features = torch.cat(self.all_features, dim=0)
        final_labels = torch.cat(self.all_labels, dim=0)
        joblib.dump(final_features, os.path.join(output_dir, f"{label}_features.joblib"))
        joblib.dump(final_labels, os.path.join(output_dir, f"{label}_labels.joblib"))

    def reset_stored_features(self):
        self.all_features = []
        self.all_labels = []


def extract_features(model, training_args, splits, output_dir):
    trainer = NetfoundFeatureExtractorTrainer(model=model, args=training_args, label_names=["labels"])
    for name, dataset in splits.items():
        trainer.predict(dataset)
        trainer.dump_features(output_dir, name)
        trainer.reset_stored_features()
