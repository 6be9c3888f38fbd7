# Source: https://github.com/huggingface/transformers/issues/5993
# Report: Trainer._prediction_loop kept every batch's logits (and label ids) on the GPU, concatenating them each iteration and moving them to CPU only after the loop, so GPU memory grew linearly with the test set
# Shape: the proposed single-GPU fix: each batch's logits and labels go to host memory right after prediction_step, and the host chunks are concatenated once after the loop
# Expect: near-miss: must be silent
import numpy as np
import torch
from tqdm import tqdm


class PredictionOutput:
    def __init__(self, predictions, label_ids, metrics):
        self.predictions = predictions
        self.label_ids = label_ids
        self.metrics = metrics


class Trainer:
    def __init__(self, model, args, compute_metrics=None):
        self.model = model.to(args.device)
        self.args = args
        self.compute_metrics = compute_metrics

    def prediction_step(self, model, inputs):
        inputs = {k: v.to(self.args.device) for k, v in inputs.items()}
        has_labels = "labels" in inputs
        with torch.no_grad():
            outputs = model(**inputs)
            loss = outputs.loss.mean().item() if has_labels else None
            logits = outputs.logits
        labels = inputs["labels"] if has_labels else None
        return loss, logits.detach(), labels

    def _prediction_loop(self, dataloader, description):
        model = self.model
        model.eval()
        eval_losses = []
        preds_host = []
        labels_host = []
        for inputs in tqdm(dataloader, desc=description):
            loss, logits, labels = self.prediction_step(model, inputs)
            if loss is not None:
                eval_losses.append(loss)
            if logits is not None:
                preds_host.append(logits.cpu())
            if labels is not None:
                labels_host.append(labels.cpu())

        preds = torch.cat(preds_host, dim=0).numpy() if preds_host else None
        label_ids = torch.cat(labels_host, dim=0).numpy() if labels_host else None
        metrics = {}
        if self.compute_metrics is not None and preds is not None and label_ids is not None:
            metrics = self.compute_metrics(preds, label_ids)
        if eval_losses:
            metrics["eval_loss"] = float(np.mean(eval_losses))
        return PredictionOutput(predictions=preds, label_ids=label_ids, metrics=metrics)
