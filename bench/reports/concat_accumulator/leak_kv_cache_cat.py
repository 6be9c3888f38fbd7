# Source: https://www.shashankshekhar.com/logs/kv-cache-torch-cat
# Report: the common KV-cache implementation grows the cache with torch.cat at every decode step, re-copying the whole cache each token (quadratic copying, a transient second copy of the cache)
# Shape: a self-attention block keeps self.k_cache / self.v_cache and concatenates the new key/value onto them in forward, called once per generated token
# Expect: TML008 line 37; TML008 line 38
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

    def reset_cache(self):
        self.k_cache = None
        self.v_cache = None

    def _split(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.n_heads, self.d_head).transpose(1, 2)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = self._split(q), self._split(k), self._split(v)
        if self.k_cache is None:
            self.k_cache = k
            self.v_cache = v
        else:
            # every call copies the whole cache into a new, one-token-longer tensor
            self.k_cache = torch.cat([self.k_cache, k], dim=2)  # expect: TML008
            self.v_cache = torch.cat([self.v_cache, v], dim=2)  # expect: TML008
        causal = self.k_cache.size(2) == n and n > 1
        out = F.scaled_dot_product_attention(q, self.k_cache, self.v_cache, is_causal=causal)
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
    for blk in model.blocks:
        blk.reset_cache()
    logits = model(prompt)
    generated = [prompt]
    for _ in range(max_new_tokens):
        probs = torch.softmax(logits[:, -1] / temperature, dim=-1)
        nxt = torch.multinomial(probs, num_samples=1)
        generated.append(nxt)
        logits = model(nxt)  # only the new token; past keys/values come from the cache
    return torch.cat(generated, dim=1)
