# Source: https://github.com/EuroEval/EuroEval/pull/973
# Report: evaluating fine-tuned encoders with HF Trainer ran out of GPU memory because all eval logits were concatenated on the device; fixed by setting eval_accumulation_steps=32
# Shape: TrainingArguments built in a helper without eval_accumulation_steps, Trainer built with compute_metrics, then evaluate() on the test split
# Expect: TML017 line 36
import sys

import torch
from transformers import Trainer, TrainingArguments
from transformers.trainer_utils import IntervalStrategy


def get_training_args(benchmark_config, model_config, iteration_idx: int, batch_size=None) -> TrainingArguments:
    if batch_size is None:
        batch_size = benchmark_config.batch_size
    training_args = TrainingArguments(
        output_dir=model_config.model_cache_dir,
        eval_strategy=IntervalStrategy.STEPS,
        save_strategy=IntervalStrategy.STEPS,
        eval_steps=30,
        save_steps=30,
        max_steps=1 if hasattr(sys, "_called_from_test") else 10_000,
        report_to=[],
        save_total_limit=1,
        per_device_train_batch_size=batch_size,
        per_device_eval_batch_size=batch_size,
        learning_rate=2e-5,
        warmup_ratio=0.01,
        gradient_accumulation_steps=32 // batch_size,
        load_best_model_at_end=True,
        seed=4242 + iteration_idx,
    )
    return training_args


def finetune_single_iteration(model, dataset, training_args, compute_metrics, data_collator, callbacks):
    trainer = Trainer(  # expect: TML017
        model=model,
        args=training_args,
        train_dataset=dataset["train"],
        eval_dataset=dataset["val"],
        compute_metrics=compute_metrics,
        callbacks=callbacks,
        data_collator=data_collator,
    )
    trainer.train()
    with torch.inference_mode():
        test_scores = trainer.evaluate(eval_dataset=dataset["test"], metric_key_prefix="test")
    return test_scores
