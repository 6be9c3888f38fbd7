# Source: https://github.com/Lightning-AI/lit-llama/pull/4
# Report: autoregressive generation grew the token tensor with torch.cat every step; replaced by a preallocated output buffer filled in place (faster, no repeated copies)
# Shape: @no_grad sampling helper rebinds idx = torch.cat((idx, idx_next), dim=-1) once per generated token
# Expect: TML008 line 31
from typing import Optional

import torch
import torch.nn.functional as F


@torch.no_grad()
def sample_tokens(
    model: torch.nn.Module,
    idx: torch.Tensor,
    max_new_tokens: int,
    max_seq_length: int,
    temperature: float = 0.8,
    top_k: Optional[int] = 200,
    eos_id: Optional[int] = None,
) -> torch.Tensor:
    for _ in range(max_new_tokens):
        # crop the context to what the model can attend to
        idx_cond = idx if idx.size(1) <= max_seq_length else idx[:, -max_seq_length:]
        logits = model(idx_cond)
        logits = logits[:, -1] / temperature
        if top_k is not None:
            v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
            logits = torch.where(logits < v[:, [-1]], torch.full_like(logits, -float("inf")), logits)
        probs = F.softmax(logits, dim=-1)
        idx_next = torch.multinomial(probs, num_samples=1)
        idx = torch.cat((idx, idx_next), dim=-1)  # expect: TML008
        if eos_id is not None and bool((idx_next == eos_id).all()):
            break
    return idx


def main(model, tokenizer, prompt: str, num_samples: int = 3, device: str = "cuda"):
    encoded = tokenizer.encode(prompt, bos=True, eos=False, device=device)
    model.eval()
    outputs = []
    for _ in range(num_samples):
        y = sample_tokens(model, encoded[None, :], max_new_tokens=256,
                          max_seq_length=model.config.block_size, eos_id=tokenizer.eos_id)
        outputs.append(tokenizer.decode(y[0].cpu()))
    return outputs
