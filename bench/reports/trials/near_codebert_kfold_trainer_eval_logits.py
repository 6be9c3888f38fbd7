# Source: https://github.com/guiseAA/Fine-Tuning_Cross-Validation/blob/47998ae0668e40875c2fa95bf19aa7949ca2fec4/src/trainer.py
# Report: audit of a CodeBERT affinity k-fold fine-tune: every fold builds a fresh model and a HF Trainer with compute_metrics and per-epoch evaluation; this is the fixed variant, where TrainingArguments sets eval_accumulation_steps so the evaluation loop moves the gathered predictions to the CPU every few steps instead of holding the whole validation fold on the GPU
# Shape: same train_model() with KFold split, resumable fold index, CodeAffinityDataset pair, TrainingArguments (now with eval_accumulation_steps=16) and Trainer per fold, checkpoint resume, trainer.evaluate() dumped to metrics.json
# Expect: near-miss: must be silent
import json
import os

import torch
from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score
from sklearn.model_selection import KFold
from torch.utils.data import Dataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments

RESULTS = "results/code_affinity"


class CodeAffinityDataset(Dataset):
    def __init__(self, methods, snippets, targets, tokenizer, max_length=512):
        self.methods, self.snippets, self.targets = methods, snippets, targets
        self.tokenizer, self.max_length = tokenizer, max_length

    def __len__(self):
        return len(self.methods)

    def __getitem__(self, idx):
        text = f"Method: {self.methods[idx]} Snippet: {self.snippets[idx]}"
        enc = self.tokenizer(text, padding="max_length", truncation=True, max_length=self.max_length, return_tensors="pt")
        return {"input_ids": enc["input_ids"].squeeze(0), "attention_mask": enc["attention_mask"].squeeze(0),
                "labels": torch.tensor(self.targets[idx], dtype=torch.float)}


def compute_metrics(p):
    preds, labels = p.predictions.squeeze(), p.label_ids
    return {"mse": mean_squared_error(labels, preds), "r2": r2_score(labels, preds),
            "mae": mean_absolute_error(labels, preds)}


def train_model(df, num_splits=5, name="microsoft/codebert-base"):
    methods, snippets, targets = df["method"].tolist(), df["fragment"].tolist(), df["y"].tolist()
    folds = list(KFold(n_splits=num_splits, shuffle=True, random_state=42).split(methods))
    fold_file = os.path.join(RESULTS, "current_fold.txt")
    start = int(open(fold_file).read().strip()) if os.path.exists(fold_file) else 0
    for fold in range(start, num_splits):
        tr, va = folds[fold]
        tokenizer = AutoTokenizer.from_pretrained(name)
        model = AutoModelForSequenceClassification.from_pretrained(name, num_labels=1)
        pick = lambda xs, ids: [xs[i] for i in ids]
        train_ds = CodeAffinityDataset(pick(methods, tr), pick(snippets, tr), pick(targets, tr), tokenizer)
        val_ds = CodeAffinityDataset(pick(methods, va), pick(snippets, va), pick(targets, va), tokenizer)
        out_dir = os.path.join(RESULTS, f"fold_{fold + 1}")
        os.makedirs(out_dir, exist_ok=True)
        args = TrainingArguments(output_dir=out_dir, eval_strategy="epoch", save_strategy="epoch",
                                 per_device_train_batch_size=2, per_device_eval_batch_size=2,
                                 num_train_epochs=5, save_total_limit=2, report_to="none",
                                 load_best_model_at_end=True, metric_for_best_model="mse",
                                 greater_is_better=False, eval_accumulation_steps=16)
        trainer = Trainer(model=model, args=args, train_dataset=train_ds, eval_dataset=val_ds, compute_metrics=compute_metrics)
        ckpts = sorted(d for d in os.listdir(out_dir) if d.startswith("checkpoint"))
        trainer.train(resume_from_checkpoint=os.path.join(out_dir, ckpts[-1]) if ckpts else None)
        trainer.save_model(os.path.join(out_dir, "model_trained"))
        metrics = trainer.evaluate()
        with open(os.path.join(out_dir, "metrics.json"), "w") as fh:
            json.dump(metrics, fh, indent=2)
        with open(fold_file, "w") as fh:
            fh.write(str(fold + 1))
