# Source: https://github.com/jeremyarancio/invoice-reader/blob/main/machine_learning/code/train.py
# Report: fixed variant of the repo's LayoutLM invoice fine-tuning: eval_accumulation_steps set so eval logits are moved to the CPU every few steps
# Shape: with eval_accumulation_steps the Trainer offloads accumulated logits to host memory every 8 eval steps instead of growing one GPU buffer over the eval set
# Expect: near-miss: must be silent
import argparse
import os

import evaluate
import numpy as np
from datasets import load_from_disk
from transformers import (
    LayoutLMForTokenClassification,
    LayoutLMTokenizerFast,
    Trainer,
    TrainingArguments,
    set_seed,
)

from preprocess import preprocess_dataset


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset_dir", type=str, default=os.getenv("SM_CHANNEL_TRAINING"))
    parser.add_argument("--output_dir", type=str, default=os.getenv("SM_MODEL_DIR"))
    parser.add_argument("--pretrained_model_name", type=str, default="microsoft/layoutlm-base-uncased")
    parser.add_argument("--epochs", type=float, default=1)
    parser.add_argument("--per_device_train_batch_size", type=int, default=32)
    parser.add_argument("--per_device_eval_batch_size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--labels", nargs="+", type=str)
    return parser.parse_known_args()[0]


def build_metric_fn(label_names):
    seqeval = evaluate.load("seqeval")

    def compute_metrics(p):
        predictions, labels = p
        predictions = np.argmax(predictions, axis=2)
        kept_preds = [[label_names[pr] for pr, lab in zip(pred, gold) if lab != -100]
                      for pred, gold in zip(predictions, labels)]
        kept_labels = [[label_names[lab] for pr, lab in zip(pred, gold) if lab != -100]
                       for pred, gold in zip(predictions, labels)]
        bio = lambda seqs: [["B-" + t if t != "O" else t for t in s] for s in seqs]
        return seqeval.compute(predictions=bio(kept_preds), references=bio(kept_labels))

    return compute_metrics


if __name__ == "__main__":
    args = parse_args()
    set_seed(42)
    id2label = dict(enumerate(args.labels))
    label2id = {k: v for v, k in id2label.items()}
    tokenizer = LayoutLMTokenizerFast.from_pretrained(args.pretrained_model_name)
    model = LayoutLMForTokenClassification.from_pretrained(
        args.pretrained_model_name, num_labels=len(args.labels), label2id=label2id, id2label=id2label
    )
    dataset = preprocess_dataset(load_from_disk(args.dataset_dir), tokenizer=tokenizer, labels_ref=args.labels)

    training_args = TrainingArguments(
        output_dir=args.output_dir,
        num_train_epochs=args.epochs,
        per_device_train_batch_size=args.per_device_train_batch_size,
        per_device_eval_batch_size=args.per_device_eval_batch_size,
        eval_accumulation_steps=8,
        learning_rate=args.lr,
        evaluation_strategy="epoch",
        save_strategy="epoch",
        load_best_model_at_end=True,
        metric_for_best_model="overall_f1",
    )
    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=dataset["train"],
        eval_dataset=dataset["test"],
        compute_metrics=build_metric_fn(args.labels),
    )
    trainer.train()
    tokenizer.save_pretrained(args.output_dir)
    trainer.model.save_pretrained(args.output_dir, safe_serialization=True)
