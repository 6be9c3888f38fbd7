"""Allocation sites on CUDA, inside the replay child: where the device blocks that survive were
allocated, from the caching allocator's own history.

``torch.cuda.memory._record_memory_history`` makes the allocator keep the Python stack of every
allocation; ``torch.cuda.memory._snapshot()`` then lists each segment's blocks with the stack of
the allocation that made them. The survivors (storages created in a measured iteration and
still alive two iterations later, from the live-storage meter) are matched with their blocks by
address, and each block is credited to the innermost frame of the user's code in its stack: a
file inside the folder the script runs in (the script, or a module of its project), not
PyTorch's or another installed package's. Both functions are private PyTorch APIs: when they
are missing or fail, there are no sites (the replay's stderr has the traceback), and nothing
else changes.
"""
from __future__ import annotations

import os
import traceback
from collections import defaultdict
from typing import Any, Optional

import torch

# Ring buffer of the allocator's trace: the snapshot's blocks keep their stacks regardless.
MAX_ENTRIES = 100_000
TOP_SITES = 5


def allocation_history_start() -> bool:
    """Start recording every allocation's Python stack; whether it could."""
    try:
        torch.cuda.memory._record_memory_history(enabled="all", context="alloc", stacks="python",
                                                 max_entries=MAX_ENTRIES)
    except (AttributeError, TypeError, RuntimeError):
        return False
    return True


def allocation_sites(meter: Any, iterations: list[int], folder: str) -> list[dict]:
    """The top sites, by bytes, of the CUDA blocks of the survivors created in ``iterations``:
    ``[{"file", "line", "function", "blocks", "bytes", "bytes_per_iteration"}]``, ``file``
    relative to ``folder``; bytes are the blocks' sizes (512-byte multiples)."""
    try:
        snapshot = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        return _sites(active_blocks(snapshot), meter, iterations, folder)
    except Exception:  # a private API whose shape may change: no sites, never a lost verdict
        traceback.print_exc()  # into the replay's stderr file
        return []


def _sites(blocks: dict[int, dict], meter: Any, iterations: list[int], folder: str) -> list[dict]:
    wanted = set(iterations)
    sites: dict[tuple[str, int, str], list[int]] = defaultdict(lambda: [0, 0])
    for ref in meter.live_storages():
        storage = ref()
        if storage is None or ref.device != "cuda" or ref.iteration not in wanted:
            continue
        block = blocks.get(storage.data_ptr())
        if block is None:
            continue
        site = user_frame(block.get("frames", ()), folder)
        if site is not None:
            sites[site][0] += 1
            sites[site][1] += block.get("size", 0)
    count = max(len(wanted), 1)
    ranked = sorted(sites.items(), key=lambda item: -item[1][1])[:TOP_SITES]
    return [{"file": file, "line": line, "function": function, "blocks": n, "bytes": nbytes,
             "bytes_per_iteration": nbytes // count} for (file, line, function), (n, nbytes) in ranked]


def active_blocks(snapshot: dict) -> dict[int, dict]:
    """The snapshot's allocated blocks by address (a block's address is its segment's plus the
    sizes of the blocks before it, where the snapshot does not give it)."""
    blocks: dict[int, dict] = {}
    for segment in snapshot.get("segments", ()):
        address = segment.get("address", 0)
        for block in segment.get("blocks", ()):
            address = block.get("address", address)
            if block.get("state") == "active_allocated":
                blocks[address] = block
            address += block.get("size", 0)
    return blocks


def user_frame(frames, folder: str) -> Optional[tuple[str, int, str]]:
    """The innermost frame of a file under ``folder`` (the snapshot lists the innermost first),
    as (path relative to ``folder``, line, function)."""
    prefix = os.path.join(folder, "")
    for frame in frames:
        filename = frame.get("filename", "")
        if filename.startswith(prefix) and "site-packages" not in filename:
            return os.path.relpath(filename, folder), frame.get("line", 0), frame.get("name", "")
    return None
