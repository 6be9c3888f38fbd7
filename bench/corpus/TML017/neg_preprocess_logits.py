# Modelled on: https://github.com/huggingface/transformers/issues/15466
# Report: the resulting feature: preprocess_logits_for_metrics reduces logits (argmax) before they are cached for compute_metrics.
import numpy as np
from transformers import Trainer, TrainingArguments


def argmax_logits(logits, labels):
    return logits.argmax(dim=-1)


def compute_metrics(eval_pred):
    preds, labels = eval_pred
    mask = labels != -100
    return {"accuracy": float((preds[mask] == labels[mask]).mean())}


def build_trainer(model, train_ds, eval_ds):
    args = TrainingArguments(output_dir="lm", eval_strategy="epoch")
    return Trainer(model=model, args=args, train_dataset=train_ds, eval_dataset=eval_ds,
                   compute_metrics=compute_metrics, preprocess_logits_for_metrics=argmax_logits)
