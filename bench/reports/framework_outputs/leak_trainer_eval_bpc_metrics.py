# Source: https://github.com/FLock-io/llm-loss-validator/pull/82
# Report: a validator that scores an LLM with Trainer.evaluate() adds a compute_metrics for bits-per-character; review points out the Trainer then accumulates every batch's full-vocabulary logits before calling the metric, which runs out of memory on a real eval set
# Shape: TrainingArguments without eval_accumulation_steps, Trainer given compute_metrics that needs the raw logits; evaluate() keeps (N, seq, vocab) predictions on the device until the end
# Expect: TML017 line 52
import math

import numpy as np
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments


def build_compute_metrics(total_bytes):
    def compute_metrics(eval_pred):
        logits, labels = eval_pred.predictions, eval_pred.label_ids
        shift_logits = torch.from_numpy(logits[:, :-1, :]).float()
        shift_labels = torch.from_numpy(labels[:, 1:]).long()
        nll = torch.nn.functional.cross_entropy(
            shift_logits.reshape(-1, shift_logits.size(-1)),
            shift_labels.reshape(-1),
            ignore_index=-100,
            reduction="sum",
        ).item()
        n_tokens = int((shift_labels != -100).sum())
        return {
            "token_nll": nll / max(n_tokens, 1),
            "bpc": nll / (math.log(2) * max(total_bytes, 1)),
        }
    return compute_metrics


class SFTCollator:
    def __init__(self, tokenizer, max_len=2048):
        self.tok = tokenizer
        self.max_len = max_len

    def __call__(self, batch):
        enc = self.tok([b["text"] for b in batch], truncation=True, max_length=self.max_len,
                       padding=True, return_tensors="pt")
        labels = enc["input_ids"].clone()
        labels[enc["attention_mask"] == 0] = -100
        enc["labels"] = labels
        return enc


def validate(model_name, eval_dataset, out_dir="val_out", batch_size=4):
    tokenizer = AutoTokenizer.from_pretrained(model_name)
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(model_name, torch_dtype=torch.bfloat16)
    total_bytes = int(np.sum([len(x["text"].encode("utf-8")) for x in eval_dataset]))
    args = TrainingArguments(output_dir=out_dir, per_device_eval_batch_size=batch_size,
                             bf16=True, report_to=[], remove_unused_columns=False)
    trainer = Trainer(  # expect: TML017
        model=model,
        args=args,
        eval_dataset=eval_dataset,
        data_collator=SFTCollator(tokenizer),
        compute_metrics=build_compute_metrics(total_bytes),
    )
    metrics = trainer.evaluate()
    return {"eval_loss": metrics["eval_loss"], "bpc": metrics["eval_bpc"]}
