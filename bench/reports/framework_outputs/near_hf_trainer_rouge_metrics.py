# Source: https://discuss.huggingface.co/t/cuda-out-of-memory-when-using-trainer-with-compute-metrics/2941/13
# Report: Trainer.evaluate ran out of CUDA memory with compute_metrics; the answer reduced logits to token ids per batch (preprocess_logits_for_metrics) and moved accumulated outputs off the GPU
# Shape: same ROUGE fine-tune, but logits are argmax-ed per batch by preprocess_logits_for_metrics and eval_accumulation_steps flushes them to CPU
# Expect: near-miss: must be silent
import numpy as np
import torch
import evaluate
from datasets import load_dataset
from transformers import (
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    DataCollatorForSeq2Seq,
    Trainer,
    TrainingArguments,
)

CKPT = "facebook/bart-base"
tokenizer = AutoTokenizer.from_pretrained(CKPT)
model = AutoModelForSeq2SeqLM.from_pretrained(CKPT)
rouge = evaluate.load("rouge")


def preprocess(batch):
    enc = tokenizer(batch["article"], max_length=512, truncation=True)
    enc["labels"] = tokenizer(text_target=batch["highlights"], max_length=128, truncation=True)["input_ids"]
    return enc


def keep_token_ids(logits, labels):
    return torch.argmax(logits[0] if isinstance(logits, tuple) else logits, dim=-1)


def compute_metrics(eval_pred):
    pred_ids, label_ids = eval_pred
    label_ids = np.where(label_ids == -100, tokenizer.pad_token_id, label_ids)
    preds = tokenizer.batch_decode(pred_ids, skip_special_tokens=True)
    refs = tokenizer.batch_decode(label_ids, skip_special_tokens=True)
    scores = rouge.compute(predictions=preds, references=refs)
    return {k: round(v, 4) for k, v in scores.items()}


raw = load_dataset("cnn_dailymail", "3.0.0")
tokenized = raw.map(preprocess, batched=True, remove_columns=raw["train"].column_names)

args = TrainingArguments(
    output_dir="bart-cnn",
    per_device_train_batch_size=8,
    per_device_eval_batch_size=8,
    eval_strategy="steps",
    eval_steps=2000,
    learning_rate=3e-5,
    num_train_epochs=3,
    fp16=True,
    eval_accumulation_steps=16,
)
trainer = Trainer(
    model=model,
    args=args,
    train_dataset=tokenized["train"],
    eval_dataset=tokenized["validation"],
    data_collator=DataCollatorForSeq2Seq(tokenizer, model=model),
    compute_metrics=compute_metrics,
    preprocess_logits_for_metrics=keep_token_ids,
)
trainer.train()
print(trainer.evaluate())
