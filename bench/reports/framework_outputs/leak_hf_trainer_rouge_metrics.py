# Source: https://discuss.huggingface.co/t/cuda-out-of-memory-when-using-trainer-with-compute-metrics/2941/13
# Report: Trainer.evaluate ran out of CUDA memory once compute_metrics was given: the full-vocab logits of every eval batch were concatenated on the GPU before the metric ran
# Shape: summarisation fine-tune with a ROUGE compute_metrics helper, no eval_accumulation_steps and no logits preprocessing, so the Trainer keeps all eval logits on device
# Expect: TML017 line 51
import numpy as np
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


def compute_metrics(eval_pred):
    logits, label_ids = eval_pred
    pred_ids = np.argmax(logits[0] if isinstance(logits, tuple) else logits, axis=-1)
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
)
trainer = Trainer(  # expect: TML017
    model=model,
    args=args,
    train_dataset=tokenized["train"],
    eval_dataset=tokenized["validation"],
    data_collator=DataCollatorForSeq2Seq(tokenizer, model=model),
    compute_metrics=compute_metrics,
)
trainer.train()
print(trainer.evaluate())
