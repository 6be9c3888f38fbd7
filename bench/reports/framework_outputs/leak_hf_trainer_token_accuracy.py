# Source: https://github.com/MeetKai/functionary/pull/38
# Report: the PR adding token-accuracy compute_metrics to a Trainer fine-tuning script also added preprocess_logits_for_metrics, because Trainer otherwise gathers every eval batch's full-vocabulary logits before compute_metrics runs (high evaluation memory).
# Shape: Trainer gets compute_metrics over raw logits with no eval_accumulation_steps and no logits reduction, so all [batch, seq, vocab] logits of the eval set are concatenated on the device.
# Expect: TML017 line 52
import math

import numpy as np
import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments

IGNORE_INDEX = -100


def compute_metrics(eval_preds):
    logits, labels = eval_preds
    preds = np.argmax(logits, axis=-1)
    # next-token prediction: shift so that position t predicts token t + 1
    preds = preds[:, :-1]
    labels = labels[:, 1:]
    mask = labels != IGNORE_INDEX
    acc = float((preds[mask] == labels[mask]).sum()) / max(int(mask.sum()), 1)
    return {"accuracy": acc}


def train(model_name, train_dataset, eval_dataset, output_dir):
    tokenizer = AutoTokenizer.from_pretrained(model_name, model_max_length=4096,
                                              padding_side="right", use_fast=False)
    tokenizer.pad_token = tokenizer.unk_token
    model = AutoModelForCausalLM.from_pretrained(model_name, torch_dtype=torch.bfloat16)

    training_args = TrainingArguments(
        output_dir=output_dir,
        per_device_train_batch_size=1,
        per_device_eval_batch_size=1,
        gradient_accumulation_steps=16,
        evaluation_strategy="steps",
        eval_steps=200,
        save_strategy="steps",
        save_steps=200,
        learning_rate=2e-5,
        num_train_epochs=2,
        bf16=True,
        gradient_checkpointing=True,
        logging_steps=10,
        report_to="wandb",
    )

    def data_collator(features):
        return transformers.default_data_collator(features)

    trainer = Trainer(  # expect: TML017
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        tokenizer=tokenizer,
        data_collator=data_collator,
        compute_metrics=compute_metrics,
    )
    trainer.train()
    metrics = trainer.evaluate()
    metrics["perplexity"] = math.exp(metrics["eval_loss"])
    trainer.log_metrics("eval", metrics)
    trainer.save_model(output_dir)
