# Source: https://github.com/unslothai/unsloth/issues/365
# Report: reading model(input_ids, labels=input_ids).loss to compute perplexity with an Unsloth 4-bit Llama-3 model OOMs on an 8 GB card; wrapping the call in torch.no_grad() "just works"
# Shape: the fix from the thread: the scorer runs under @torch.no_grad() and keeps only Python floats (loss.item()) per conversation, so no graph and no device tensor outlives an iteration
# Expect: near-miss: must be silent
import math

import torch
from unsloth import FastLanguageModel

MAX_SEQ_LEN = 8192


def load_model(name="unsloth/llama-3-8b-Instruct-bnb-4bit"):
    model, tokenizer = FastLanguageModel.from_pretrained(
        model_name=name,
        max_seq_length=MAX_SEQ_LEN,
        dtype=None,
        load_in_4bit=True,
    )
    FastLanguageModel.for_inference(model)
    return model, tokenizer


def encode_chat(tokenizer, messages, device):
    return tokenizer.apply_chat_template(
        messages,
        add_generation_prompt=True,
        return_tensors="pt",
    ).to(device)


@torch.no_grad()
def evaluate_perplexity(model, tokenizer, conversations):
    """Average per-conversation perplexity of the fine-tuned chat model."""
    model.eval()
    nlls = []
    n_tokens = 0
    for messages in conversations:
        input_ids = encode_chat(tokenizer, messages, model.device)
        out = model(input_ids, labels=input_ids)
        n_tokens += input_ids.shape[-1]
        nlls.append(out.loss.item() * input_ids.shape[-1])
    total_nll = sum(nlls)
    return math.exp(total_nll / max(n_tokens, 1))


if __name__ == "__main__":
    model, tokenizer = load_model()
    convs = [
        [
            {"role": "system", "content": "You are a pirate chatbot who always responds in pirate speak!"},
            {"role": "user", "content": "Who are you?"},
        ],
        [
            {"role": "user", "content": "Explain LoRA in one sentence."},
        ],
    ]
    print("ppl:", evaluate_perplexity(model, tokenizer, convs))
