# Source: https://github.com/huggingface/transformers/issues/26702
# Report: Mistral QLoRA fine-tune with TRL SFTTrainer: trainer.evaluate() dies with CUDA OOM inside torch_pad_and_concatenate as soon as compute_metrics is passed; without compute_metrics evaluation fits
# Shape: the fix suggested for this error: logits reduced to token ids by preprocess_logits_for_metrics and moved off the GPU every eval_accumulation_steps
# Expect: near-miss: must be silent
import evaluate
import numpy as np
from datasets import load_dataset
from peft import LoraConfig
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig, TrainingArguments
from trl import SFTTrainer

base_model = "mistralai/Mistral-7B-v0.1"
tokenizer = AutoTokenizer.from_pretrained(base_model)
tokenizer.pad_token = tokenizer.eos_token
model = AutoModelForCausalLM.from_pretrained(
    base_model,
    quantization_config=BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4"),
    device_map={"": 0},
)

data = load_dataset("json", data_files={"train": "train.jsonl", "test": "test.jsonl"})
accuracy = evaluate.load("accuracy")


def preprocess_logits_for_metrics(logits, labels):
    if isinstance(logits, tuple):
        logits = logits[0]
    return logits.argmax(dim=-1)


def compute_metrics(eval_pred):
    predictions, labels = eval_pred
    mask = labels != -100
    return accuracy.compute(predictions=predictions[mask], references=labels[mask])


training_arguments = TrainingArguments(
    output_dir="./results",
    per_device_train_batch_size=4,
    per_device_eval_batch_size=4,
    gradient_accumulation_steps=4,
    evaluation_strategy="steps",
    eval_steps=50,
    eval_accumulation_steps=8,
    learning_rate=2e-4,
    fp16=True,
)

trainer = SFTTrainer(
    model=model,
    train_dataset=data["train"],
    eval_dataset=data["test"],
    peft_config=LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, task_type="CAUSAL_LM"),
    dataset_text_field="text",
    max_seq_length=1024,
    tokenizer=tokenizer,
    args=training_arguments,
    compute_metrics=compute_metrics,
    preprocess_logits_for_metrics=preprocess_logits_for_metrics,
)
print(trainer.evaluate())
trainer.train()
