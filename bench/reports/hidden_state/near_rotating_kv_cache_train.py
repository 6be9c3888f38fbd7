# Source: https://github.com/mistralai/mistral-inference/issues/20
# Report: training with the reference Transformer leaked ~30 MB of GPU memory per step through the self.cache_k/self.cache_v rotating-cache writes
# Shape: fixed variant: the cache only receives detached keys/values, so the buffers owned by self never hold a step's graph
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from torch import nn


class SlidingAttention(nn.Module):
    def __init__(self, dim, n_heads, window, max_batch):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = dim // n_heads
        self.window = window
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.cache_k = torch.zeros(max_batch, window, n_heads, self.head_dim, device="cuda")
        self.cache_v = torch.zeros(max_batch, window, n_heads, self.head_dim, device="cuda")

    def _split(self, t, bsz, seqlen):
        return t.view(bsz, seqlen, self.n_heads, self.head_dim)

    def forward(self, x, positions, mask=None):
        bsz, seqlen, _ = x.shape
        xq = self._split(self.wq(x), bsz, seqlen)
        xk = self._split(self.wk(x), bsz, seqlen)
        xv = self._split(self.wv(x), bsz, seqlen)

        # rotating buffer: slot = absolute position modulo the window
        slots = (positions[-self.window:] % self.window)[None, :, None, None]
        slots = slots.expand(bsz, -1, self.n_heads, self.head_dim)
        self.cache_k[:bsz].scatter_(1, slots, xk[:, -self.window:].detach())
        self.cache_v[:bsz].scatter_(1, slots, xv[:, -self.window:].detach())

        if seqlen > 1:
            keys, values = xk, xv
        else:
            cur = int(positions[-1]) + 1
            keys, values = self.cache_k[:bsz, :cur], self.cache_v[:bsz, :cur]
        q, k, v = (t.transpose(1, 2) for t in (xq, keys, values))
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.wo(out.transpose(1, 2).reshape(bsz, seqlen, -1))


def train(model, head, loader, optimizer, seq_len):
    positions = torch.arange(seq_len, device="cuda")
    causal = torch.ones(seq_len, seq_len, device="cuda", dtype=torch.bool).tril()
    model.train()
    for step, (emb, target) in enumerate(loader):
        emb, target = emb.cuda(), target.cuda()
        logits = head(model(emb, positions, causal))
        loss = F.cross_entropy(logits.flatten(0, 1), target.flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % 50 == 0:
            print(step, loss.item(), torch.cuda.memory_allocated() >> 20)
