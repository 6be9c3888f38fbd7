# Source: https://github.com/MAGICS-LAB/DNABERT_2/issues/78
# Report: fine-tuning DNABERT-2 with the repo's train.py runs fine, but the evaluation phase creeps up in GPU memory and dies with CUDA OOM even on a small eval file; a later commenter points to the HF-forum fix for Trainer+compute_metrics OOM (preprocess_logits_for_metrics / eval_accumulation_steps); the repo's compute_metrics already has to unpack a tuple of model outputs
# Shape: same HfArgumentParser setup, with eval_accumulation_steps defaulted in the dataclass and preprocess_logits_for_metrics keeping only argmax ids of the logits (hidden states dropped) per step
# Expect: near-miss: must be silent
from dataclasses import dataclass, field
from typing import Optional

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
    eval_accumulation_steps: Optional[int] = field(default=8)


def preprocess_logits_for_metrics(logits, labels):
    if isinstance(logits, tuple):
        logits = logits[0]
    return logits.argmax(dim=-1)


def compute_metrics(eval_pred):
    predictions, labels = eval_pred
    valid = labels != -100
    return {
        "accuracy": sklearn.metrics.accuracy_score(labels[valid], predictions[valid]),
        "f1": sklearn.metrics.f1_score(labels[valid], predictions[valid], average="macro"),
    }


def train(train_dataset, val_dataset, data_collator, num_labels):
    parser = transformers.HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    tokenizer = transformers.AutoTokenizer.from_pretrained(
        model_args.model_name_or_path, model_max_length=training_args.model_max_length, trust_remote_code=True
    )
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        model_args.model_name_or_path, num_labels=num_labels, trust_remote_code=True
    )
    trainer = transformers.Trainer(
        model=model,
        tokenizer=tokenizer,
        args=training_args,
        compute_metrics=compute_metrics,
        preprocess_logits_for_metrics=preprocess_logits_for_metrics,
        train_dataset=train_dataset,
        eval_dataset=val_dataset,
        data_collator=data_collator,
    )
    trainer.train()
    return trainer.evaluate(eval_dataset=val_dataset)
