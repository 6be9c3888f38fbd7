# Modelled on: https://github.com/huggingface/transformers/issues/18947
# Report: the suggested setting: eval_accumulation_steps moves accumulated predictions to the CPU every N steps.
import numpy as np
from transformers import Trainer, TrainingArguments


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    return {"accuracy": float((np.argmax(logits, -1) == labels).mean())}


def build_trainer(model, train_ds, eval_ds):
    args = TrainingArguments(
        output_dir="./results",
        eval_strategy="steps",
        eval_steps=100,
        eval_accumulation_steps=20,
    )
    return Trainer(model=model, args=args, train_dataset=train_ds, eval_dataset=eval_ds,
                   compute_metrics=compute_metrics)
