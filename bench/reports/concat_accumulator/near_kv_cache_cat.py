# Source: https://www.shashankshekhar.com/logs/kv-cache-torch-cat
# Report: the common KV-cache implementation grows the cache with torch.cat at every decode step, re-copying the whole cache each token (quadratic copying, a transient second copy of the cache)
# Shape: same decoder, but the cache is preallocated once for max_len and each step writes the new key/value into the next slots and reads a view, as the post recommends
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class CachedSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.proj = nn.Linear(d_model, d_model, bias=False)
        self.k_cache = None
        self.v_cache = None
        self.pos = 0

    def reset_cache(self, batch, max_len, device, dtype):
        shape = (batch, self.n_heads, max_len, self.d_head)
        self.k_cache = torch.empty(shape, device=device, dtype=dtype)
        self.v_cache = torch.empty(shape, device=device, dtype=dtype)
        self.pos = 0

    def _split(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.n_heads, self.d_head).transpose(1, 2)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = self._split(q), self._split(k), self._split(v)
        end = self.pos + n
        # write in place into the preallocated buffer, no re-copy of the past
        self.k_cache[:, :, self.pos:end] = k
        self.v_cache[:, :, self.pos:end] = v
        keys, values = self.k_cache[:, :, :end], self.v_cache[:, :, :end]
        causal = self.pos == 0 and n > 1
        self.pos = end
        out = F.scaled_dot_product_attention(q, keys, values, is_causal=causal)
        return self.proj(out.transpose(1, 2).reshape(b, n, d))


class TinyDecoder(nn.Module):
    def __init__(self, vocab, d_model=256, n_heads=4, n_layers=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.blocks = nn.ModuleList(CachedSelfAttention(d_model, n_heads) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, tokens):
        h = self.embed(tokens)
        for blk in self.blocks:
            h = h + blk(h)
        return self.lm_head(self.norm(h))


@torch.inference_mode()
def generate(model, prompt, max_new_tokens=256, temperature=0.8):
    max_len = prompt.size(1) + max_new_tokens
    for blk in model.blocks:
        blk.reset_cache(prompt.size(0), max_len, prompt.device, model.embed.weight.dtype)
    logits = model(prompt)
    generated = [prompt]
    for _ in range(max_new_tokens):
        probs = torch.softmax(logits[:, -1] / temperature, dim=-1)
        nxt = torch.multinomial(probs, num_samples=1)
        generated.append(nxt)
        logits = model(nxt)  # only the new token; past keys/values come from the cache
    return torch.cat(generated, dim=1)
