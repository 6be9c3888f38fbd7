# Source: https://github.com/huggingface/transformers/pull/27458
# Report: the review pointed to the existing ways to keep evaluation outputs small; preprocess_logits_for_metrics reduces the logits before they are gathered.
# Shape: same helper-built arguments and causal LM; the Trainer gets preprocess_logits_for_metrics returning the argmax ids.
# Expect: near-miss: must be silent
import numpy as np
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments


def make_training_args(output_dir, epochs=3):
    return TrainingArguments(
        output_dir=output_dir,
        num_train_epochs=epochs,
        per_device_train_batch_size=4,
        per_device_eval_batch_size=4,
        eval_strategy="steps",
        eval_steps=500,
    )


def argmax_ids(logits, labels):
    return logits.argmax(dim=-1)


def token_accuracy(eval_pred):
    preds, labels = eval_pred
    mask = labels[:, 1:] != -100
    return {"token_acc": float((preds[:, :-1] == labels[:, 1:])[mask].mean())}


def finetune(train_ds, eval_ds, checkpoint="gpt2-large"):
    model = AutoModelForCausalLM.from_pretrained(checkpoint)
    trainer = Trainer(
        model=model,
        args=make_training_args("runs/clm"),
        train_dataset=train_ds,
        eval_dataset=eval_ds,
        compute_metrics=token_accuracy,
        preprocess_logits_for_metrics=argmax_ids,
    )
    trainer.train()
    return trainer.evaluate()
