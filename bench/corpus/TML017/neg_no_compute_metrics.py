# Modelled on: https://github.com/huggingface/transformers/issues/12878
# Report: near-miss: without compute_metrics (loss only, prediction_loss_only) the Trainer does not keep the logits.
from transformers import Trainer, TrainingArguments


def build_trainer(model, train_ds, eval_ds, collator):
    args = TrainingArguments(output_dir="mlm", eval_strategy="steps", eval_steps=200,
                             prediction_loss_only=True)
    return Trainer(model=model, args=args, data_collator=collator,
                   train_dataset=train_ds, eval_dataset=eval_ds)
