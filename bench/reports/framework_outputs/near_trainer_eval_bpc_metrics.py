# Source: https://github.com/FLock-io/llm-loss-validator/pull/82
# Report: a validator that scores an LLM with Trainer.evaluate() adds a compute_metrics for bits-per-character; review points out the Trainer then accumulates every batch's full-vocabulary logits before calling the metric, which runs out of memory on a real eval set
# Shape: same validator, but the logits are reduced per batch to the label log-probs (preprocess_logits_for_metrics) and eval_accumulation_steps moves the small results off the device every few steps
# Expect: near-miss: must be silent
import math

import numpy as np
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments


def label_logprobs(logits, labels):
    # keep only log p(label) per position instead of the (seq, vocab) logits
    logp = torch.log_softmax(logits[:, :-1, :].float(), dim=-1)
    tgt = labels[:, 1:].clamp(min=0).unsqueeze(-1)
    picked = logp.gather(-1, tgt).squeeze(-1)
    return picked.masked_fill(labels[:, 1:] == -100, 0.0)


def build_compute_metrics(total_bytes):
    def compute_metrics(eval_pred):
        picked, labels = eval_pred.predictions, eval_pred.label_ids
        nll = float(-np.sum(picked))
        n_tokens = int(np.sum(labels[:, 1:] != -100))
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
                             eval_accumulation_steps=8, bf16=True, report_to=[],
                             remove_unused_columns=False)
    trainer = Trainer(
        model=model,
        args=args,
        eval_dataset=eval_dataset,
        data_collator=SFTCollator(tokenizer),
        compute_metrics=build_compute_metrics(total_bytes),
        preprocess_logits_for_metrics=label_logprobs,
    )
    metrics = trainer.evaluate()
    return {"eval_loss": metrics["eval_loss"], "bpc": metrics["eval_bpc"]}
