# Source: https://github.com/huggingface/transformers/pull/27458
# Report: with large generative models and a compute_metrics function, evaluation hit OOM because the prediction logits are kept on the GPU during evaluation; eval_accumulation_steps was described as a slow workaround.
# Shape: the TrainingArguments come back from a project helper function (no eval_accumulation_steps); the Trainer of a causal LM gets compute_metrics.
# Expect: TML017 line 34
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


def token_accuracy(eval_pred):
    logits, labels = eval_pred
    preds = np.argmax(logits[:, :-1], axis=-1)
    mask = labels[:, 1:] != -100
    return {"token_acc": float((preds == labels[:, 1:])[mask].mean())}


def finetune(train_ds, eval_ds, checkpoint="gpt2-large"):
    model = AutoModelForCausalLM.from_pretrained(checkpoint)
    trainer = Trainer(
        model=model,
        args=make_training_args("runs/clm"),
        train_dataset=train_ds,
        eval_dataset=eval_ds,
        compute_metrics=token_accuracy,  # expect: TML017
    )
    trainer.train()
    return trainer.evaluate()
