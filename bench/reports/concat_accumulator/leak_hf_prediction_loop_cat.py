# Source: https://github.com/huggingface/transformers/issues/7158
# Report: trainer.evaluate() on BART/BillSum ran out of GPU memory because prediction_loop grew `preds` with torch.cat on every batch, keeping the logits of the whole eval set (plus a second copy during each cat) on the GPU.
# Shape: a Trainer-like class whose prediction_step returns detached (no_grad) logits and labels; prediction_loop grows preds and label_ids with torch.cat((acc, new), dim=0) inside the batch loop.
# Expect: TML008 lines 47, 49
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
        preds = None
        label_ids = None
        for inputs in tqdm(dataloader, desc=description):
            loss, logits, labels = self.prediction_step(model, inputs)
            batch_size = inputs["input_ids"].shape[0]
            if loss is not None:
                eval_losses.extend([loss] * batch_size)
            if logits is not None:
                preds = logits if preds is None else torch.cat((preds, logits), dim=0)  # expect: TML008
            if labels is not None:
                label_ids = labels if label_ids is None else torch.cat((label_ids, labels), dim=0)  # expect: TML008

        preds = preds.cpu().numpy() if preds is not None else None
        label_ids = label_ids.cpu().numpy() if label_ids is not None else None
        metrics = {}
        if self.compute_metrics is not None and preds is not None and label_ids is not None:
            metrics = self.compute_metrics(EvalPrediction(predictions=preds, label_ids=label_ids))
        if eval_losses:
            metrics["eval_loss"] = float(np.mean(eval_losses))
        return preds, label_ids, metrics

    def evaluate(self, eval_dataloader):
        _, _, metrics = self.prediction_loop(eval_dataloader, description="Evaluation")
        return metrics
