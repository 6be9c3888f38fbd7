# Source: https://github.com/MAGICS-LAB/DNABERT_2/issues/78
# Report: fine-tuning DNABERT-2 with the repo's train.py runs fine, but the evaluation phase creeps up in GPU memory and dies with CUDA OOM even on a small eval file; a later commenter points to the HF-forum fix for Trainer+compute_metrics OOM (preprocess_logits_for_metrics / eval_accumulation_steps); the repo's compute_metrics already has to unpack a tuple of model outputs
# Shape: HfArgumentParser dataclass subclass of TrainingArguments (no eval_accumulation_steps), compute_metrics unpacking the tuple only at the end, plain transformers.Trainer
# Expect: TML017 line 54
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import sklearn.metrics
import transformers


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default="zhihan1996/DNABERT-2-117M")


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    model_max_length: int = field(default=512)
    evaluation_strategy: str = field(default="steps")
    eval_steps: int = field(default=200)
    per_device_eval_batch_size: int = field(default=16)


def calculate_metric_with_sklearn(logits: np.ndarray, labels: np.ndarray):
    if logits.ndim == 3:
        logits = logits.reshape(-1, logits.shape[-1])
    predictions = np.argmax(logits, axis=-1)
    valid = labels != -100
    return {
        "accuracy": sklearn.metrics.accuracy_score(labels[valid], predictions[valid]),
        "f1": sklearn.metrics.f1_score(labels[valid], predictions[valid], average="macro"),
        "matthews_correlation": sklearn.metrics.matthews_corrcoef(labels[valid], predictions[valid]),
    }


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    if isinstance(logits, tuple):
        logits = logits[0]
    return calculate_metric_with_sklearn(logits, labels)


def train(train_dataset, val_dataset, data_collator, num_labels):
    parser = transformers.HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    tokenizer = transformers.AutoTokenizer.from_pretrained(
        model_args.model_name_or_path, model_max_length=training_args.model_max_length, trust_remote_code=True
    )
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        model_args.model_name_or_path, num_labels=num_labels, trust_remote_code=True
    )
    trainer = transformers.Trainer(  # expect: TML017
        model=model,
        tokenizer=tokenizer,
        args=training_args,
        compute_metrics=compute_metrics,
        train_dataset=train_dataset,
        eval_dataset=val_dataset,
        data_collator=data_collator,
    )
    trainer.train()
    return trainer.evaluate(eval_dataset=val_dataset)
