# Source: https://github.com/huggingface/transformers/issues/25487
# Report: GPU memory rose continuously during Trainer validation; the model returned attentions (output_attentions=True) and every eval step's outputs were accumulated on the GPU because eval_accumulation_steps was unset
# Shape: Trainer with compute_metrics and TrainingArguments without eval_accumulation_steps; the model config asks for all attention maps, which the eval loop concatenates on the device
# Expect: TML017 line 45
import numpy as np
import evaluate
from datasets import load_dataset
from transformers import (
    AutoConfig,
    AutoModelForSequenceClassification,
    AutoTokenizer,
    Trainer,
    TrainingArguments,
)

checkpoint = "bert-base-uncased"
config = AutoConfig.from_pretrained(checkpoint, num_labels=2, output_attentions=True)
tokenizer = AutoTokenizer.from_pretrained(checkpoint)
model = AutoModelForSequenceClassification.from_pretrained(checkpoint, config=config)

raw = load_dataset("glue", "sst2")
encoded = raw.map(lambda b: tokenizer(b["sentence"], truncation=True, padding="max_length", max_length=256), batched=True)
metric = evaluate.load("accuracy")


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    if isinstance(logits, tuple):
        logits = logits[0]
    preds = np.argmax(logits, axis=-1)
    return metric.compute(predictions=preds, references=labels)


args = TrainingArguments(
    output_dir="out/sst2-attn",
    per_device_train_batch_size=32,
    per_device_eval_batch_size=64,
    evaluation_strategy="steps",
    eval_steps=500,
    num_train_epochs=3,
    learning_rate=2e-5,
    fp16=True,
)

trainer = Trainer(  # expect: TML017
    model=model,
    args=args,
    train_dataset=encoded["train"],
    eval_dataset=encoded["validation"],
    tokenizer=tokenizer,
    compute_metrics=compute_metrics,
)
trainer.train()
