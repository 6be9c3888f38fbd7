"""Memory budgets for a user's own code, in the user's own process: the engine behind
``torchmemlint.testing`` (``assert_no_memory_growth``, ``memory_budget``). Imports torch.

Between two calls of ``step()`` (two *boundaries*) it measures, per device:

- the CPU (and any device without an allocator of its own): the live-storage meter
  (``meters.LiveStorageMeter``), exact to the byte;
- CUDA: the caching allocator, ``memory_allocated()`` after a synchronize (the live-storage
  meter's figures, raw and rounded to the allocator's 512-byte blocks, come along);
- autograd graph nodes kept alive: those reachable through ``grad_fn`` and ``next_functions``
  from every live tensor.

The cyclic garbage collector is off while the calls run (one collection before the first):
what reference cycles keep (a custom ``autograd.Function`` that stores its output on ``ctx``)
then shows as growth at every call instead of at whatever call the collector happens to run.
At the end, the storages created by a measured call and still alive are credited to the names
that keep them (``retention.credit_survivors``) and to the lines that created them.
"""
from __future__ import annotations

import gc
import linecache
import os
import statistics
import sys
import sysconfig
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

import torch

from torchmemlint.testing import MemoryGrowthError
from torchmemlint.verify.meters import LiveStorageMeter
from torchmemlint.verify.retention import credit_survivors

# Frames in these folders are not "the line that created" a storage: the innermost frame
# outside them is (the user's model, loss, training step).
_LIBRARY_FOLDERS = tuple(os.path.dirname(os.path.abspath(module.__file__)) + os.sep
                         for module in (torch, sys.modules["torchmemlint"]))
_STANDARD_LIBRARY = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep

Site = tuple[str, int, str]  # file, line, function
NO_SITE: Site = ("", 0, "")


class _CallCounter:
    """What ``LiveStorageMeter`` reads when a storage is first seen: the number of the call
    running (0 before the first)."""

    iteration = 0


class SiteMeter(LiveStorageMeter):
    """The live-storage meter, recording as the creation *site* of each storage the innermost
    frame that is neither torch, torchmemlint nor the standard library."""

    def __init__(self, counter: _CallCounter) -> None:
        super().__init__(counter, script="")

    def _creation_line(self) -> Site:  # type: ignore[override]
        frame = sys._getframe(2)
        while frame is not None:
            filename = frame.f_code.co_filename
            if not (filename.startswith(_LIBRARY_FOLDERS) or filename.startswith(_STANDARD_LIBRARY)
                    or filename.startswith("<frozen")):
                return filename, frame.f_lineno, frame.f_code.co_name
            frame = frame.f_back
        return NO_SITE


def graph_nodes() -> set:
    """Every autograd node reachable from a live tensor (``grad_fn``, then ``next_functions``)."""
    tensor_type = torch._C.TensorBase
    # issubclass(type(...)) rather than isinstance: isinstance reads ``__class__``, and some
    # lazily deprecated module attributes warn when read.
    pending = [obj.grad_fn for obj in gc.get_objects()
               if issubclass(type(obj), tensor_type) and obj.grad_fn is not None]
    seen: dict[int, Any] = {}
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen[id(node)] = node
        pending.extend(function for function, _ in getattr(node, "next_functions", ()) if function is not None)
    return set(seen)


def _device_key(device: torch.device) -> str:
    if device.type == "cuda":
        return f"cuda:{torch.cuda.current_device() if device.index is None else device.index}"
    return device.type


@dataclass
class Boundary:
    """What was alive after ``call`` calls (0: before the first)."""

    call: int
    storage: dict[str, dict[str, int]]  # device type -> live-storage meter sample
    cuda_allocated: Optional[int]  # the allocator's count on the metered CUDA device, when used
    cuda_peak: Optional[int]
    nodes: int


@dataclass
class DeviceGrowth:
    """One device's growth over the measured calls: the median of what each call added."""

    device: str  # "cpu", "cuda:0", ...
    meter: str  # "live-storage" or "cuda-allocator"
    bytes_per_call: int
    peak_bytes: int  # the highest per-call peak of the measured calls
    live_storage_bytes_per_call: int  # the live-storage meter's figure (== bytes_per_call on the CPU)
    live_storage_rounded_bytes_per_call: int  # the same, each storage rounded to 512-byte blocks


@dataclass
class MemoryGrowth:
    """The outcome of a memory budget. ``failed`` when any device grew by more than the
    tolerance per call or autograd graph nodes piled up; ``str()`` says where and why."""

    calls: int  # measured calls (after the warm-up)
    warmup: int
    tolerance_bytes: int
    devices: dict[str, DeviceGrowth]
    nodes_per_call: int
    retained_by: list[dict] = field(default_factory=list)  # retention.credit_survivors' records
    created_at: list[dict] = field(default_factory=list)  # {"file", "line", "function", "code", "bytes_per_call", ...}
    cycle_bytes_per_call: int = 0  # survivors that only reference cycles kept
    what: str = "step"

    @property
    def grown(self) -> dict[str, DeviceGrowth]:
        return {name: growth for name, growth in self.devices.items() if growth.bytes_per_call > self.tolerance_bytes}

    @property
    def failed(self) -> bool:
        return bool(self.grown) or self.nodes_per_call > 0

    @property
    def bytes_per_call(self) -> int:
        """The largest growth per call over the devices."""
        return max((growth.bytes_per_call for growth in self.devices.values()), default=0)

    def __str__(self) -> str:
        verdict = "memory grows" if self.failed else "no memory growth"
        lines = [f"{verdict} over {self.calls} measured calls of {self.what} (after {self.warmup} warm-up "
                 f"calls; tolerance {self.tolerance_bytes:,} B per call):"]
        for growth in self.devices.values():
            extra = ""
            if growth.meter == "cuda-allocator":
                extra = (f"; live storages: {growth.live_storage_bytes_per_call:,} B, "
                         f"{growth.live_storage_rounded_bytes_per_call:,} B in 512-byte blocks")
            lines.append(f"  {growth.device}: {growth.bytes_per_call:+,} B per call ({growth.meter} meter{extra}; "
                         f"peak {growth.peak_bytes:,} B)")
        lines.append(f"  autograd graph: {self.nodes_per_call:+,} nodes kept alive per call")
        if self.retained_by:
            lines.append("kept alive by:")
            for record in self.retained_by:
                lines.append(f"  {record['name']}: {record['storages']} storages, {record['bytes']:,} B "
                             f"(e.g. {record['example']})")
        if self.cycle_bytes_per_call:
            lines.append(f"  reference cycles: {self.cycle_bytes_per_call:,} B per call, freed only when the cyclic "
                         "garbage collector runs (gc.collect())")
        if self.created_at:
            lines.append("created at (still alive at the end, per call):")
            for site in self.created_at:
                where = f"{_short(site['file'])}:{site['line']}" if site["file"] else "(no Python frame)"
                code = f": {site['code']}" if site["code"] else ""
                lines.append(f"  {where} in {site['function']}{code}  [{site['device']}: "
                             f"{site['bytes_per_call']:,} B, {site['storages_per_call']:g} storages]")
        return "\n".join(lines)


def _short(path: str) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if relative.startswith("..") else relative


class MemoryBudget:
    """Meters the calls between ``step()`` boundaries (see ``torchmemlint.testing.memory_budget``).
    ``device``: None meters every device the code uses; else only that one (``"cpu"``,
    ``"cuda"``, ``"cuda:1"``)."""

    def __init__(self, per_iteration: int = 0, *, warmup: int = 2, device: Any = None,
                 roots: Iterable[tuple[str, Any]] = (), what: str = "step") -> None:
        if not isinstance(per_iteration, int) or per_iteration < 0:
            raise ValueError(f"the tolerance must be a number of bytes >= 0, not {per_iteration!r}")
        if not isinstance(warmup, int) or warmup < 0:
            raise ValueError(f"warmup must be a number of calls >= 0, not {warmup!r}")
        self.tolerance = per_iteration
        self.warmup = warmup
        self.device = None if device is None else torch.device(device)
        self.what = what
        self._roots = list(roots)
        self._counter = _CallCounter()
        self._meter = SiteMeter(self._counter)
        self._boundaries: list[Boundary] = []
        self._cuda_device: Optional[int] = None
        self._gc_was_enabled = False
        self.result: Optional[MemoryGrowth] = None

    # -- the context manager -------------------------------------------------------------------

    def __enter__(self) -> "MemoryBudget":
        if self.device is not None and self.device.type == "cuda":
            if not torch.cuda.is_available():
                raise RuntimeError(f"device={self.device}, but torch.cuda.is_available() is False")
            self._cuda_device = torch.cuda.current_device() if self.device.index is None else self.device.index
        self._gc_was_enabled = gc.isenabled()
        gc.collect()
        gc.disable()
        self._meter.__enter__()
        return self

    def __exit__(self, kind, error, traceback) -> None:
        __tracebackhide__ = True  # pytest shows the user's line, not this method's
        self._meter.__exit__(kind, error, traceback)
        try:
            if kind is None:
                self._sample()  # closes the last call
                self.result = self._judge(self._roots + _frame_roots(sys._getframe(1)))
        finally:
            if self._gc_was_enabled:
                gc.enable()
        if self.result is not None and self.result.failed:
            raise MemoryGrowthError(self.result)

    def step(self) -> None:
        """An iteration starts: closes the previous one (measures), opens the next."""
        self._sample()
        self._counter.iteration += 1

    # -- measuring -----------------------------------------------------------------------------

    def _sample(self) -> None:
        # What the meters themselves run is not the user's code: the live-storage meter must
        # not see it.
        with torch.utils._python_dispatch._disable_current_modes():
            allocated = peak = None
            cuda_device = self._metered_cuda_device()
            if cuda_device is not None:
                torch.cuda.synchronize(cuda_device)
                allocated = torch.cuda.memory_allocated(cuda_device)
                peak = torch.cuda.max_memory_allocated(cuda_device)
                torch.cuda.reset_peak_memory_stats(cuda_device)
            nodes = len(graph_nodes())
            storage = self._meter.sample()
        self._boundaries.append(Boundary(self._counter.iteration, storage, allocated, peak, nodes))

    def _metered_cuda_device(self) -> Optional[int]:
        if self._cuda_device is not None:
            return self._cuda_device
        if self.device is None and torch.cuda.is_available() and torch.cuda.is_initialized():
            return torch.cuda.current_device()
        return None

    # -- judging -------------------------------------------------------------------------------

    def _judge(self, roots: list[tuple[str, Any]]) -> MemoryGrowth:
        calls = self._counter.iteration
        measured = list(range(self.warmup + 1, calls + 1))
        if len(measured) < 2:
            raise ValueError(f"{calls} call(s) ran: {self.warmup} warm-up and at least 2 measured calls are needed")
        devices = self._device_growth(measured)
        nodes = _median([self._boundaries[k].nodes - self._boundaries[k - 1].nodes for k in measured])
        result = MemoryGrowth(len(measured), self.warmup, self.tolerance, devices, nodes, what=self.what)
        if result.failed:
            self._explain(result, roots, first=measured[0], last=calls - 1)
        return result

    def _device_growth(self, measured: list[int]) -> dict[str, DeviceGrowth]:
        boundaries = self._boundaries
        types = sorted({device for boundary in boundaries for device in boundary.storage})
        if self.device is not None:
            types = [self.device.type]
        devices = {}
        for device_type in types:
            def series(key: str) -> list[int]:
                return [b.storage.get(device_type, {}).get(key, 0) for b in boundaries]

            live, rounded, peaks = series("live"), series("live_rounded"), series("peak")
            growth = _median([live[k] - live[k - 1] for k in measured])
            growth_rounded = _median([rounded[k] - rounded[k - 1] for k in measured])
            name, meter, per_call, peak = device_type, "live-storage", growth, max(peaks[k] for k in measured)
            if device_type == "cuda" and all(boundaries[k].cuda_allocated is not None for k in [measured[0] - 1, *measured]):
                name = f"cuda:{self._metered_cuda_device()}"
                meter = "cuda-allocator"
                per_call = _median([boundaries[k].cuda_allocated - boundaries[k - 1].cuda_allocated for k in measured])
                peak = max(boundaries[k].cuda_peak for k in measured)
            devices[name] = DeviceGrowth(name, meter, per_call, peak, growth, growth_rounded)
        return devices

    def _explain(self, result: MemoryGrowth, roots: list[tuple[str, Any]], first: int, last: int) -> None:
        """Survivors: storages created by calls ``first..last`` (not the last call, whose results
        the next call may still replace) and alive now."""
        window = max(last - first + 1, 1)
        survivors = [ref for ref in self._meter.live_storages()
                     if first <= ref.iteration <= last and (self.device is None or ref.device == self.device.type)]
        result.retained_by = credit_survivors(_spread(roots), {ref.key: ref.nbytes for ref in survivors})
        sites: dict[tuple[str, Site], list[int]] = defaultdict(lambda: [0, 0])
        for ref in survivors:
            sites[(ref.device, ref.line)][0] += 1
            sites[(ref.device, ref.line)][1] += ref.nbytes
        result.created_at = [
            {"device": device, "file": file, "line": line, "function": function,
             "code": linecache.getline(file, line).strip() if file else "",
             "storages_per_call": storages / window, "bytes_per_call": nbytes // window}
            for (device, (file, line, function)), (storages, nbytes)
            in sorted(sites.items(), key=lambda item: -item[1][1])]
        # Whatever a collection frees was kept by reference cycles only.
        sizes = {ref.key: ref.nbytes for ref in survivors}
        del survivors
        gc.collect()
        still_alive = {ref.key for ref in self._meter.live_storages()}
        result.cycle_bytes_per_call = sum(n for key, n in sizes.items() if key not in still_alive) // window


def _spread(roots: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """A root that is a namespace (a dict with names for keys: a script's globals, keyword
    arguments) stands for its entries, so that each is credited on its own."""
    spread = []
    for name, value in roots:
        if isinstance(value, dict) and value and all(isinstance(key, str) for key in value):
            spread += [(f"{name}[{key!r}]", item) for key, item in value.items() if not key.startswith("__")]
        else:
            spread.append((name, value))
    return spread


def _median(values: list[int]) -> int:
    return int(statistics.median(values)) if values else 0


def _frame_roots(frame: Any) -> list[tuple[str, Any]]:
    """The names of the code around the budget: the caller's locals, then its module's globals
    (the caller: the innermost frame that is not torch, torchmemlint or pytest's machinery)."""
    skipped = _LIBRARY_FOLDERS + tuple(os.path.dirname(module.__file__) + os.sep for name in ("pluggy", "_pytest")
                                       if (module := sys.modules.get(name)) is not None)
    while frame is not None and frame.f_code.co_filename.startswith(skipped):
        frame = frame.f_back
    if frame is None:
        return []
    names = [(name, value) for name, value in frame.f_locals.items()]
    names += [(name, value) for name, value in frame.f_globals.items()
              if not name.startswith("__") and name not in frame.f_locals]
    return names


def step_roots(step: Callable[[], Any]) -> list[tuple[str, Any]]:
    """What a step function can reach by name: a bound method's object, a partial's arguments,
    its closure, its defaults, and the globals it names."""
    roots: list[tuple[str, Any]] = []
    seen_partial = 0
    while hasattr(step, "func") and hasattr(step, "args") and seen_partial < 10:  # functools.partial
        roots += [(f"<argument {i}>", value) for i, value in enumerate(step.args)]
        roots += [(name, value) for name, value in (step.keywords or {}).items()]
        step = step.func
        seen_partial += 1
    if hasattr(step, "__self__") and not isinstance(step.__self__, type(sys)):
        roots.append((type(step.__self__).__name__, step.__self__))
    function = getattr(step, "__func__", step)
    code = getattr(function, "__code__", None)
    if code is None:  # a callable object
        return roots + [(type(step).__name__, step)]
    for name, cell in zip(code.co_freevars, function.__closure__ or ()):
        try:
            roots.append((name, cell.cell_contents))
        except ValueError:  # an empty cell
            pass
    names = code.co_varnames[:code.co_argcount]
    defaults = getattr(function, "__defaults__", None) or ()
    roots += list(zip(names[len(names) - len(defaults):], defaults))
    roots += list((getattr(function, "__kwdefaults__", None) or {}).items())
    module_globals = getattr(function, "__globals__", {})
    roots += [(name, module_globals[name]) for name in code.co_names if name in module_globals]
    return roots
