# Source: https://github.com/hiwjc/bean_classifiation/blob/13e421321ecf45f9d81b7c38817d1b15fb426196/bean_train.py
# Report: a ViT fine-tune with the HF Trainer evaluates every 100 steps with compute_metrics but sets no eval_accumulation_steps (TrainingArguments in bean_model.py), so the Trainer concatenates every eval batch's logits on the GPU until the eval set ends (small here: 3 bean classes, but the same setup on a bigger label space keeps them all)
# Shape: fixed: same script, but TrainingArguments sets eval_accumulation_steps=8, so the Trainer moves the gathered eval logits to the CPU every 8 steps instead of keeping the whole eval set on the GPU
# Expect: near-miss: must be silent
import evaluate
import numpy as np
import torch
from datasets import load_dataset
from transformers import Trainer, TrainingArguments, ViTFeatureExtractor, ViTForImageClassification

model_name_or_path = "google/vit-base-patch16-224-in21k"
ds = load_dataset("beans")
feature_extractor = ViTFeatureExtractor.from_pretrained(model_name_or_path)
labels = ds["train"].features["labels"].names


def transform(example_batch):
    inputs = feature_extractor([x for x in example_batch["image"]], return_tensors="pt")
    inputs["labels"] = example_batch["labels"]
    return inputs


def collate_fn(batch):
    return {
        "pixel_values": torch.stack([x["pixel_values"] for x in batch]),
        "labels": torch.tensor([x["labels"] for x in batch]),
    }


metric = evaluate.load("accuracy")


def compute_metrics(p):
    return metric.compute(predictions=np.argmax(p.predictions, axis=1), references=p.label_ids)


prepared_ds = ds.with_transform(transform)
model = ViTForImageClassification.from_pretrained(
    model_name_or_path,
    num_labels=len(labels),
    id2label={str(i): c for i, c in enumerate(labels)},
    label2id={c: str(i) for i, c in enumerate(labels)},
)
training_args = TrainingArguments(
    output_dir="./vit-base-beans",
    per_device_train_batch_size=16,
    evaluation_strategy="steps",
    num_train_epochs=4,
    fp16=True,
    save_steps=100,
    eval_steps=100,
    eval_accumulation_steps=8,
    logging_steps=10,
    learning_rate=2e-4,
    remove_unused_columns=False,
    load_best_model_at_end=True,
)
trainer = Trainer(
    model=model,
    args=training_args,
    data_collator=collate_fn,
    compute_metrics=compute_metrics,
    train_dataset=prepared_ds["train"],
    eval_dataset=prepared_ds["validation"],
    tokenizer=feature_extractor,
)
train_results = trainer.train()
trainer.save_model()
trainer.log_metrics("train", train_results.metrics)
metrics = trainer.evaluate(prepared_ds["validation"])
trainer.log_metrics("eval", metrics)
