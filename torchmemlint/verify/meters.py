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
- ``GraphMeter``: the autograd graphs that live tensors keep: nodes reachable from their
  ``grad_fn`` through ``next_functions``, and the tensors those nodes still save. A graph's nodes
  are C++ objects on the host heap, whatever device its tensors are on; no storage meter sees them.
- ``NativeHeapMeter``: the process's native heap in use (glibc ``mallinfo2``; the resident set
  elsewhere): what the graph's nodes cost in bytes (and, on the CPU, tensor storages too).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
import resource
import sys
import tracemalloc
import warnings
import weakref
from typing import Any, Optional

import torch
from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes
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


class _TensorRef(weakref.ref):
    """A weak reference to one op output's Python tensor, keyed by its ``id``."""

    __slots__ = ("key",)


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
        # Every tensor an op returned whose Python object is alive: where the graph meter starts.
        self._tensors: dict[int, _TensorRef] = {}
        self.tallies: dict[str, _DeviceTally] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for value in tree_flatten(out)[0]:
            if isinstance(value, torch.Tensor):
                self._track(value)
        return out

    def _track(self, tensor: torch.Tensor) -> None:
        self._track_tensor(tensor)
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

    def _track_tensor(self, tensor: torch.Tensor) -> None:
        key = id(tensor)
        known = self._tensors.get(key)
        if known is not None and known() is tensor:
            return
        ref = _TensorRef(tensor, self._tensor_released)
        ref.key = key
        self._tensors[key] = ref

    def _tensor_released(self, ref: _TensorRef) -> None:
        if self._tensors.get(ref.key) is ref:
            del self._tensors[ref.key]

    def live_tensors(self) -> list[torch.Tensor]:
        return [tensor for ref in list(self._tensors.values()) if (tensor := ref()) is not None]

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
    Tracing starts at the first boundary (the first entry into the scope): what the script set up
    before it (imports of a framework, a dataset) is not traced, so a snapshot per boundary stays
    cheap; a snapshot costs time in proportion to the blocks traced (seconds per boundary in a
    Lightning script traced from its imports on). It starts again (``restart``) at the end of the
    warm-up, so that what the first iterations set up for good (a framework's loops, lazily
    imported modules, optimizer state) is not traced either: in a Lightning validation loop that
    took a boundary's snapshot from about 0.2 s to a few ms. Reads 0 at the first boundary and at
    the restart; the verdict uses only the growth between boundaries after the warm-up."""

    _FILTERS = (tracemalloc.Filter(False, _OWN_FILES), tracemalloc.Filter(False, tracemalloc.__file__))

    def sample(self, restart: bool = False) -> int:
        if not tracemalloc.is_tracing():
            tracemalloc.start()
            return 0
        if restart:
            tracemalloc.clear_traces()
            return 0
        snapshot = tracemalloc.take_snapshot().filter_traces(self._FILTERS)
        return sum(stat.size for stat in snapshot.statistics("filename"))

    @staticmethod
    def stop() -> None:
        tracemalloc.stop()


class GraphMeter:
    """The autograd nodes reachable from live tensors (``grad_fn``, then ``next_functions``) and
    the tensors they still save (``_saved_*`` attributes that unpack; after ``backward()`` they
    are freed and raise). Node objects are held during one walk only, so ``id`` identifies them."""

    MAX_NODES = 200_000  # bounds one walk on a script whose live tensors reach a huge graph

    def sample(self, tensors: list[torch.Tensor]) -> dict[str, int]:
        seen: dict[int, Any] = {}
        stack = [tensor.grad_fn for tensor in tensors if tensor.grad_fn is not None]
        saved = 0
        while stack and len(seen) < self.MAX_NODES:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen[id(node)] = node
            saved += _saved_tensors(node)
            stack.extend(function for function, _ in node.next_functions if function is not None)
        return {"nodes": len(seen), "saved": saved}


_SAVED_NAMES: dict[type, tuple[str, ...]] = {}


def _saved_tensors(node: Any) -> int:
    names = _SAVED_NAMES.get(type(node))
    if names is None:
        names = _SAVED_NAMES[type(node)] = tuple(name for name in dir(node) if name.startswith("_saved_"))
    count = 0
    for name in names:
        try:
            value = getattr(node, name)
        except RuntimeError:  # freed by backward()
            continue
        if isinstance(value, torch.Tensor):
            count += 1
        elif isinstance(value, (tuple, list)):
            count += sum(isinstance(item, torch.Tensor) for item in value)
    return count


def gradient_norm() -> float:
    """The L2 norm of every leaf tensor's ``.grad`` in the process (parameters and any other
    leaf that requires grad): what a missing ``zero_grad()`` makes grow. Computed outside the
    storage meter's mode, so its temporaries are not counted."""
    squares = 0.0
    seen: set[int] = set()
    with _disable_current_modes(), torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # isinstance() on deprecated module attributes warns
        for obj in gc.get_objects():
            if not isinstance(obj, torch.Tensor) or not obj.is_leaf or not obj.requires_grad:
                continue
            grad = obj.grad
            if grad is None or id(grad) in seen or grad.is_sparse:
                continue
            seen.add(id(grad))
            squares += float(grad.detach().double().pow(2).sum())
    return squares ** 0.5


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


class NativeHeapMeter:
    """Bytes the process's native heap has handed out: ``uordblks + hblkhd`` of glibc's
    ``mallinfo2`` (arenas and mmapped chunks), or, without glibc, the resident set size."""

    def __init__(self) -> None:
        self._mallinfo2 = None
        library = ctypes.util.find_library("c")
        try:
            libc = ctypes.CDLL(library) if library else None
            function = getattr(libc, "mallinfo2", None)
        except OSError:
            function = None
        if function is not None:
            function.restype = _MallInfo2
            function.argtypes = []
            self._mallinfo2 = function
        self.source = "mallinfo2" if self._mallinfo2 is not None else "rss"

    def sample(self) -> int:
        if self._mallinfo2 is not None:
            info = self._mallinfo2()
            return info.uordblks + info.hblkhd - tracemalloc.get_tracemalloc_memory()
        try:
            with open("/proc/self/statm") as statm:
                return int(statm.read().split()[1]) * resource.getpagesize()
        except OSError:
            # macOS and others: ru_maxrss is the peak (bytes there), the closest portable reading
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
