# Source: https://github.com/pytorch/pytorch/pull/112301
# Report: the lru_cache added to cache BSR scatter_mm indices data kept the argument index tensors (and the cached index tensors it returns) alive, so sparse tests showed CUDA memory leaks until the cache was cleared
# Shape: lru_cache(maxsize=128) on a function whose key holds the crow/col index tensors through a wrapper and whose value is a tuple of device tensors; each new sparse layout adds an entry that stays alive
# Expect: TML012 line 28
from functools import lru_cache

import torch


class TensorAsKey:
    """Hashable stand-in for a tensor: equal if it views the same storage the same way."""

    def __init__(self, obj):
        self.obj = obj
        self._key = (obj.data_ptr(), obj.storage_offset(), obj.shape, obj.stride(), obj.dtype)
        self._hash = hash(self._key)

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return isinstance(other, TensorAsKey) and self._key == other._key

    def get(self):
        return self.obj


@lru_cache(maxsize=128)  # expect: TML012
def _scatter_mm_indices_data(Ms, Ks, N, crow_key, col_key):
    crow_indices, col_indices = crow_key.get(), col_key.get()
    nnz_per_row = crow_indices.diff()
    rows = torch.repeat_interleave(torch.arange(nnz_per_row.numel(), device=crow_indices.device), nnz_per_row)
    r_offsets = rows * (Ms * N)
    q_offsets = col_indices * (Ks * N)
    p_offsets = torch.arange(col_indices.numel(), device=col_indices.device)
    return r_offsets, q_offsets, p_offsets


def bsr_dense_mm(bsr, dense):
    Ms, Ks = bsr.values().shape[-2:]
    N = dense.shape[-1]
    indices = _scatter_mm_indices_data(
        Ms, Ks, N, TensorAsKey(bsr.crow_indices()), TensorAsKey(bsr.col_indices())
    )
    r_offsets, q_offsets, _ = indices
    blocks = bsr.values()
    dense_blocks = dense.reshape(-1, Ks, N)[q_offsets // (Ks * N)]
    prods = torch.bmm(blocks, dense_blocks)
    out = torch.zeros(bsr.shape[0] // Ms, Ms, N, device=dense.device, dtype=dense.dtype)
    out.index_add_(0, r_offsets // (Ms * N), prods)
    return out.reshape(-1, N)


@torch.no_grad()
def run_pruned_inference(weights, batches, blocksize=(32, 32)):
    outputs = []
    for w, x in zip(weights, batches):
        bsr = w.to_sparse_bsr(blocksize)
        outputs.append(bsr_dense_mm(bsr, x).sum().item())
    return outputs
