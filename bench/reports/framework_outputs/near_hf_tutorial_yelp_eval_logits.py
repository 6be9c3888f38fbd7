# Source: https://github.com/nurullahsevim/RLHF/blob/40c377a5f8da21bb8221e50bfc87e73fe34f7083/hf_tutorial.py
# Report: audit of a HF Trainer fine-tuning script (bert-base-cased, 5 labels): Trainer gets compute_metrics and per-epoch evaluation but TrainingArguments sets no eval_accumulation_steps, so every eval batch's logits are concatenated on the GPU until the whole eval set is done
# Shape: same script, but the argument helper sets eval_accumulation_steps, so the Trainer moves gathered logits to the CPU every few eval steps before compute_metrics sees them
# Expect: near-miss: must be silent
import numpy as np
import evaluate
from datasets import load_dataset
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    Trainer,
    TrainingArguments,
)

CHECKPOINT = "bert-base-cased"
accuracy = evaluate.load("accuracy")


def build_splits(tokenizer, n_train=20000, n_eval=5000):
    raw = load_dataset("yelp_review_full")

    def tokenize(batch):
        return tokenizer(batch["text"], padding="max_length", truncation=True)

    tokenized = raw.map(tokenize, batched=True)
    train = tokenized["train"].shuffle(seed=42).select(range(n_train))
    evals = tokenized["test"].shuffle(seed=42).select(range(n_eval))
    return train, evals


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    predictions = np.argmax(logits, axis=-1)
    return accuracy.compute(predictions=predictions, references=labels)


def make_args(out_dir):
    return TrainingArguments(
        output_dir=out_dir,
        evaluation_strategy="epoch",
        save_strategy="epoch",
        per_device_train_batch_size=16,
        per_device_eval_batch_size=64,
        eval_accumulation_steps=8,
        num_train_epochs=3,
        learning_rate=2e-5,
        fp16=True,
    )


def main():
    tokenizer = AutoTokenizer.from_pretrained(CHECKPOINT)
    model = AutoModelForSequenceClassification.from_pretrained(CHECKPOINT, num_labels=5)
    train_ds, eval_ds = build_splits(tokenizer)
    args = make_args("test_trainer")
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=train_ds,
        eval_dataset=eval_ds,
        compute_metrics=compute_metrics,
    )
    trainer.train()
    print(trainer.evaluate())


if __name__ == "__main__":
    main()
