# Source: https://github.com/mmcdermott/MEDS_EIC_AR/pull/86
# Report: Review of a sliding-window generation loop: the generated history grew with torch.cat on every chunk, so memory and copying scaled as O(T^2) in max_new_tokens; the author preallocated a [B, max_new_tokens] buffer instead.
# Shape: fixed version: a [B, max_new_tokens] buffer is allocated once and chunks are written by slice; the only torch.cat left builds a bounded prompt window and is not carried to the next chunk.
# Expect: near-miss: must be silent
import torch
from torch import nn


class TrajectoryModel(nn.Module):
    def __init__(self, hf_model: nn.Module, max_seq_len: int):
        super().__init__()
        self.hf_model = hf_model
        self.max_seq_len = max_seq_len

    @torch.no_grad()
    def _rolling_generate(self, batch, max_new_tokens: int, rolling_context_size=None, do_sample=True, **kwargs):
        if max_new_tokens <= 0:
            raise ValueError(f"max_new_tokens must be positive; got {max_new_tokens}.")
        ctx_size = rolling_context_size or self.max_seq_len - 1
        input_ids = batch.code
        pad_id = batch.PAD_INDEX
        eos_id = self.hf_model.config.eos_token_id
        batch_size = input_ids.size(0)
        device = input_ids.device

        generated = torch.full((batch_size, max_new_tokens), pad_id, dtype=input_ids.dtype, device=device)
        n_generated = 0
        finished = torch.zeros(batch_size, dtype=torch.bool, device=device)

        while n_generated < max_new_tokens and not bool(finished.all()):
            if n_generated == 0:
                prompt = input_ids[:, -ctx_size:]
            elif n_generated >= ctx_size:
                prompt = generated[:, n_generated - ctx_size:n_generated]
            else:
                tail = ctx_size - n_generated
                prompt = torch.cat([input_ids[:, -tail:], generated[:, :n_generated]], dim=1)
            remaining = max_new_tokens - n_generated
            chunk_budget = min(remaining, self.max_seq_len - prompt.size(1))
            if chunk_budget <= 0:
                prompt = prompt[:, 1:]
                chunk_budget = min(remaining, self.max_seq_len - prompt.size(1))
            out = self.hf_model.generate(
                input_ids=prompt,
                attention_mask=prompt != pad_id,
                max_new_tokens=chunk_budget,
                do_sample=do_sample,
                pad_token_id=pad_id,
                **kwargs,
            )
            new_tokens = out[:, prompt.size(1):]
            if bool(finished.any()):
                new_tokens = new_tokens.masked_fill(finished.unsqueeze(1), pad_id)
            generated[:, n_generated:n_generated + new_tokens.size(1)] = new_tokens
            n_generated += new_tokens.size(1)
            finished = finished | (new_tokens == eos_id).any(dim=1)

        return self._truncate_at_first_eos(generated[:, :n_generated], eos_id, pad_id)

    @staticmethod
    def _truncate_at_first_eos(x: torch.Tensor, eos_id: int, pad_id: int) -> torch.Tensor:
        is_eos = (x == eos_id).int()
        after_eos = (is_eos.cumsum(dim=1) - is_eos) > 0
        return x.masked_fill(after_eos, pad_id)
