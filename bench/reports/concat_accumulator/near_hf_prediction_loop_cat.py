# Source: https://github.com/huggingface/transformers/issues/7158
# Report: trainer.evaluate() on BART/BillSum ran out of GPU memory because prediction_loop grew `preds` with torch.cat on every batch, keeping the logits of the whole eval set (plus a second copy during each cat) on the GPU.
# Shape: close variant of the fix (logits moved off the GPU each step, one concatenation after the loop): prediction_loop collects per-batch .cpu() chunks in lists and calls torch.cat once when the loop is done.
# Expect: near-miss: must be silent
import numpy as np
import torch
from tqdm.auto import tqdm


class EvalPrediction:
    def __init__(self, predictions, label_ids):
        self.predictions = predictions
        self.label_ids = label_ids


class SimpleTrainer:
    def __init__(self, model, args, compute_metrics=None):
        self.model = model
        self.args = args
        self.compute_metrics = compute_metrics

    def _prepare_inputs(self, inputs):
        return {k: v.to(self.args.device) if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}

    def prediction_step(self, model, inputs):
        has_labels = inputs.get("labels") is not None
        inputs = self._prepare_inputs(inputs)
        with torch.no_grad():
            outputs = model(**inputs)
            loss = outputs[0].mean().item() if has_labels else None
            logits = outputs[1] if has_labels else outputs[0]
        labels = inputs.get("labels")
        return loss, logits.detach(), None if labels is None else labels.detach()

    def prediction_loop(self, dataloader, description="Evaluation"):
        model = self.model
        model.eval()
        eval_losses = []
        preds_host = []
        labels_host = []
        for inputs in tqdm(dataloader, desc=description):
            loss, logits, labels = self.prediction_step(model, inputs)
            batch_size = inputs["input_ids"].shape[0]
            if loss is not None:
                eval_losses.extend([loss] * batch_size)
            if logits is not None:
                preds_host.append(logits.cpu())
            if labels is not None:
                labels_host.append(labels.cpu())

        preds = torch.cat(preds_host, dim=0).numpy() if preds_host else None
        label_ids = torch.cat(labels_host, dim=0).numpy() if labels_host else None
        metrics = {}
        if self.compute_metrics is not None and preds is not None and label_ids is not None:
            metrics = self.compute_metrics(EvalPrediction(predictions=preds, label_ids=label_ids))
        if eval_losses:
            metrics["eval_loss"] = float(np.mean(eval_losses))
        return preds, label_ids, metrics

    def evaluate(self, eval_dataloader):
        _, _, metrics = self.prediction_loop(eval_dataloader, description="Evaluation")
        return metrics
