# Source: https://blog.csdn.net/2501_92015334/article/details/148403695
# Report: fine-tuning Qwen2.5 with the HF Trainer, a custom compute_metrics (and custom compute_loss) makes evaluation blow up GPU memory: every eval batch's full [batch, seq_len, vocab] logits are kept for compute_metrics
# Shape: LoRA text-classification-as-generation script; Trainer gets compute_metrics while TrainingArguments sets no eval_accumulation_steps, so the evaluation loop concatenates all logits on the GPU
# Expect: TML017 line 70
import numpy as np
import torch
from datasets import load_dataset
from peft import LoraConfig, get_peft_model
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    DataCollatorForSeq2Seq,
    Trainer,
    TrainingArguments,
)

MODEL_PATH = "Qwen/Qwen2.5-1.5B-Instruct"
LABELS = ["negative", "neutral", "positive"]

tokenizer = AutoTokenizer.from_pretrained(MODEL_PATH, trust_remote_code=True)
model = AutoModelForCausalLM.from_pretrained(MODEL_PATH, torch_dtype=torch.bfloat16, device_map="auto")
model = get_peft_model(model, LoraConfig(r=8, lora_alpha=32, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))


def process_func(example):
    prompt = f"<|im_start|>user\n判断情感: {example['text']}<|im_end|>\n<|im_start|>assistant\n"
    answer = LABELS[example["label"]] + "<|im_end|>"
    p_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    a_ids = tokenizer(answer, add_special_tokens=False)["input_ids"]
    input_ids = (p_ids + a_ids)[:512]
    labels = ([-100] * len(p_ids) + a_ids)[:512]
    return {"input_ids": input_ids, "attention_mask": [1] * len(input_ids), "labels": labels}


raw = load_dataset("json", data_files={"train": "train.jsonl", "test": "test.jsonl"})
train_data = raw["train"].map(process_func, remove_columns=raw["train"].column_names)
test_data = raw["test"].map(process_func, remove_columns=raw["test"].column_names)
data_collator = DataCollatorForSeq2Seq(tokenizer=tokenizer, padding=True)


def compute_metrics(pred):
    logits, labels = pred.predictions, pred.label_ids
    preds = np.argmax(logits, axis=-1)[:, :-1]
    labels = labels[:, 1:]
    mask = labels != -100
    acc = ((preds == labels) & mask).sum() / max(mask.sum(), 1)
    return {"token_accuracy": float(acc)}


class WeightedLossTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        loss = outputs.loss
        return (loss, outputs) if return_outputs else loss


train_args = TrainingArguments(
    output_dir="./output/qwen2.5_cls",
    per_device_train_batch_size=4,
    per_device_eval_batch_size=8,
    gradient_accumulation_steps=4,
    learning_rate=1e-4,
    num_train_epochs=2,
    eval_strategy="steps",
    eval_steps=100,
    logging_steps=10,
    bf16=True,
)

trainer = WeightedLossTrainer(model=model, args=train_args, train_dataset=train_data, eval_dataset=test_data, data_collator=data_collator, compute_metrics=compute_metrics)  # expect: TML017
trainer.train()
