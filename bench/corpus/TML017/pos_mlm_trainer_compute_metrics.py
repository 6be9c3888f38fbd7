# Modelled on: https://github.com/huggingface/transformers/issues/8476
# Report: "Trainer runs out of memory when computing eval score" while fine-tuning CamemBERT for MLM with compute_metrics.
import numpy as np
from transformers import Trainer, TrainingArguments


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    preds = np.argmax(logits, axis=-1)
    mask = labels != -100
    return {"accuracy": float((preds[mask] == labels[mask]).mean())}


def build_trainer(model, train_ds, eval_ds, collator):
    training_args = TrainingArguments(
        output_dir="./results",
        num_train_epochs=3,
        per_device_train_batch_size=8,
        per_device_eval_batch_size=16,
        eval_strategy="steps",
        eval_steps=25,
    )
    return Trainer(  # expect: TML017
        model=model,
        args=training_args,
        train_dataset=train_ds,
        eval_dataset=eval_ds,
        data_collator=collator,
        compute_metrics=compute_metrics,
    )
