"""What the replay measures at every iteration boundary. Runs only inside the replay child.

- ``LiveStorageMeter``: device-agnostic and exact. A ``TorchDispatchMode`` sees the output of
  every ATen op; it keeps a weak reference to each output's untyped storage, tagged with the
  iteration (and the user's line) that created it. A storage's Python object lives exactly as
  long as the storage itself (PyTorch preserves it), so the weak reference's callback fires
  when the memory is released. It sees what autograd keeps alive too: saved activations are op
  outputs like any other.
- ``CudaMeter``: the caching allocator's own count, ``torch.cuda.memory_allocated()`` and the
  per-iteration peak ``max_memory_allocated()`` (reset at each boundary), after a synchronize.
- ``HeapMeter``: the Python heap (``tracemalloc``), for costs that are Python objects (hooks and
  their closures) rather than tensors.
"""
from __future__ import annotations

import os
import sys
import tracemalloc
import weakref
from typing import Any, Optional

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

_OWN_FILES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "*")
# The CUDA caching allocator hands out blocks in multiples of 512 bytes.
CUDA_BLOCK_BYTES = 512


def cuda_rounded(nbytes: int) -> int:
    """What ``memory_allocated`` counts for a storage of ``nbytes``."""
    return 0 if nbytes == 0 else -(-nbytes // CUDA_BLOCK_BYTES) * CUDA_BLOCK_BYTES


class _StorageRef(weakref.ref):
    """A weak reference to one storage, with what the meter knows about it."""

    __slots__ = ("key", "nbytes", "device", "iteration", "line")


class _DeviceTally:
    """Byte counts of one device type between two boundaries."""

    __slots__ = ("live", "peak", "allocated", "live_rounded")

    def __init__(self) -> None:
        self.live = self.peak = self.allocated = self.live_rounded = 0

    def add(self, nbytes: int) -> None:
        self.live += nbytes
        self.live_rounded += cuda_rounded(nbytes)
        self.allocated += nbytes
        if self.live > self.peak:
            self.peak = self.live

    def remove(self, nbytes: int) -> None:
        self.live -= nbytes
        self.live_rounded -= cuda_rounded(nbytes)


class LiveStorageMeter(TorchDispatchMode):
    """Every storage an op returns, alive or not, by device type. ``iteration`` is read from the
    replay controller when a storage is first seen; ``script`` is the file whose innermost line
    is recorded as the creation site."""

    def __init__(self, controller: Any, script: str) -> None:
        super().__init__()
        self._controller = controller
        self._script = script
        self._refs: dict[int, _StorageRef] = {}
        self.tallies: dict[str, _DeviceTally] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for value in tree_flatten(out)[0]:
            if isinstance(value, torch.Tensor):
                self._track(value)
        return out

    def _track(self, tensor: torch.Tensor) -> None:
        try:
            storage = tensor.untyped_storage()
        except (RuntimeError, NotImplementedError):  # sparse, nested and other storage-less tensors
            return
        device = storage.device.type
        if device == "meta":
            return
        key = storage._cdata
        known = self._refs.get(key)
        nbytes = storage.nbytes()
        if known is not None:
            if known.nbytes != nbytes:  # resized in place (``out=`` ops, ``resize_``)
                tally = self.tallies[known.device]
                tally.remove(known.nbytes)
                tally.add(nbytes)
                known.nbytes = nbytes
            return
        ref = _StorageRef(storage, self._released)
        ref.key, ref.nbytes, ref.device = key, nbytes, device
        ref.iteration, ref.line = self._controller.iteration, self._creation_line()
        self._refs[key] = ref
        tally = self.tallies.get(device)
        if tally is None:
            tally = self.tallies[device] = _DeviceTally()
        tally.add(nbytes)

    def _released(self, ref: _StorageRef) -> None:
        if self._refs.pop(ref.key, None) is ref:
            self.tallies[ref.device].remove(ref.nbytes)

    def _creation_line(self) -> int:
        frame: Optional[Any] = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename == self._script:
                return frame.f_lineno
            frame = frame.f_back
        return 0

    def sample(self) -> dict[str, dict[str, int]]:
        """Live, peak and allocated bytes per device type since the last sample; starts the next
        interval's peak and allocation count."""
        sample = {}
        for device, tally in self.tallies.items():
            sample[device] = {"live": tally.live, "peak": tally.peak, "allocated": tally.allocated,
                              "live_rounded": tally.live_rounded}
            tally.peak = tally.live
            tally.allocated = 0
        return sample

    def live_storages(self) -> list[_StorageRef]:
        return [ref for ref in self._refs.values() if ref() is not None]


def warm_up() -> None:
    """The first op under a dispatch mode imports several hundred modules (seconds): pay that
    once in the replay server rather than in every replay. ``empty(0)`` starts no thread pool."""

    class _Passthrough(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with _Passthrough():
        torch.empty(0)


class CudaMeter:
    """The caching allocator's view of the current device."""

    def __init__(self) -> None:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()

    def sample(self) -> dict[str, int]:
        torch.cuda.synchronize()
        sample = {"allocated": torch.cuda.memory_allocated(), "peak": torch.cuda.max_memory_allocated(),
                  "reserved": torch.cuda.memory_reserved()}
        torch.cuda.reset_peak_memory_stats()
        return sample


class HeapMeter:
    """Bytes on the Python heap (``tracemalloc``), without the verifier's own allocations (its
    bookkeeping grows with the number of live storages and would otherwise look like growth).
    The replay server imports everything before tracing starts, so few blocks are traced and a
    snapshot per boundary is cheap."""

    _FILTERS = (tracemalloc.Filter(False, _OWN_FILES), tracemalloc.Filter(False, tracemalloc.__file__))

    def __init__(self) -> None:
        tracemalloc.start()

    def sample(self) -> int:
        snapshot = tracemalloc.take_snapshot().filter_traces(self._FILTERS)
        return sum(stat.size for stat in snapshot.statistics("filename"))

    @staticmethod
    def stop() -> None:
        tracemalloc.stop()
