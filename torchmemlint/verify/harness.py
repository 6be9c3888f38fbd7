"""One replay, inside its own child process: limits, seeds, meters, the user's script, and a
JSON line per iteration boundary written to the results file (so that whatever happened last,
a crash, an out-of-memory kill, a timeout, what was measured until then is kept).

Results file records (one JSON object per line):

- ``{"event": "start", "device": "cpu"|"cuda", "device_name": ..., "torch": ..., "memory_cap": ...,
  "native_meter": "mallinfo2"|"rss"}``
- ``{"event": "boundary", "iteration": k, "storage": {device_type: {"live", "peak", "allocated",
  "live_rounded"}}, "heap": bytes, "cuda": {"allocated", "peak", "reserved"}?, "graph": {"nodes",
  "saved"}, "native": bytes, "grad_norm": float, "time": s, "sampling_s": s}``, where iteration 0
  is the first entry into the scope and k >= 1 the end of iteration k (``time`` is when the
  boundary was reached, ``sampling_s`` what measuring it took);
- ``{"event": "end", "status": "capped"|"finished"|"error"|"oom", "iterations": k,
  "error": {"type", "message", "line"}?, "survivor_iterations": [...], "survivors": [{"iteration",
  "line", "device", "storages", "bytes", "rounded"}], "retained_by": [{"name", "storages", "bytes",
  "example"}]}``.
"""
from __future__ import annotations

import builtins
import gc
import json
import os
import random
import resource
import sys
import threading
import time
import traceback
import types
from collections import defaultdict
from typing import Any, Callable, Optional

import torch

from torchmemlint.verify import drive
from torchmemlint.verify.instrument import CONTROLLER
from torchmemlint.verify.meters import (
    CudaMeter, GraphMeter, HeapMeter, LiveStorageMeter, NativeHeapMeter, cuda_rounded, gradient_norm,
)
from torchmemlint.verify.retention import credit_survivors
from torchmemlint.verify.sites import allocation_history_start, allocation_sites
from torchmemlint.verify.workers import WorkerWatch, device_name

# Exit status of a child that the CUDA watchdog stopped (device memory over the cap).
WATCHDOG_EXIT = 86
# Memory the CUDA context and libraries (cuBLAS workspaces ...) may take beyond the cap before
# the watchdog acts; the per-process fraction already stops the caching allocator at the cap.
_CUDA_SLACK = 512 * 2**20
_WATCHDOG_PERIOD_S = 0.2
_OOM_WORDS = ("out of memory", "can't allocate memory", "cannot allocate memory", "not enough memory")


class StopReplay(BaseException):
    """The iteration cap was reached. A BaseException, so that a user's ``except Exception``
    does not swallow it."""


class ReplayController:
    """Counts the iterations of the instrumented scope and stops the script after ``cap``.

    An iteration *closes* (a boundary is measured) when the next one is about to start or the
    loop ends; boundary 0 is measured on first entry, before anything of the scope ran.
    Iterations are counted across re-entries (an inner loop inside an epoch loop)."""

    def __init__(self, cap: int, on_boundary) -> None:
        self.cap = cap
        self.iteration = 0  # 0 while setting up; then the number of the iteration running
        self.closed = 0  # the last iteration whose boundary was measured
        self.stopped = False
        self._on_boundary = on_boundary
        self._entered = False
        self._running = False

    def _close(self) -> None:
        if self.stopped:
            raise StopReplay  # the script caught the first one
        if not self._entered:
            self._entered = True
            self._on_boundary(0)
        elif self._running:
            self._running = False
            self.closed = self.iteration
            self._on_boundary(self.iteration)
        if self.iteration >= self.cap:
            self.stopped = True
            raise StopReplay

    def _open(self) -> None:
        self.iteration += 1
        self._running = True

    def iterate(self, iterable):
        """``for x in ITER`` → ``for x in iterate(ITER)``."""
        self._close()
        for item in iterable:
            self._open()
            yield item
            self._close()

    def check(self, condition):
        """``while COND`` → ``while check(COND)``."""
        self._close()
        if condition:
            self._open()
        return condition

    def enter(self, value):
        """First statement of a function whose calls are the iterations."""
        self._close()
        self._open()
        return value

    def finish(self) -> None:
        """The script ended: close the iteration still running (a function's last call)."""
        if self._running and not self.stopped:
            self._running = False
            self.closed = self.iteration
            self._on_boundary(self.iteration)


class _Results:
    def __init__(self, path: str) -> None:
        self._file = open(path, "w", encoding="utf-8")

    def write(self, record: dict) -> None:
        self._file.write(json.dumps(record) + "\n")
        self._file.flush()


def _address_space_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * resource.getpagesize()


def _cap_host_memory(limit: int) -> int:
    """RLIMIT_AS at the current address space plus ``limit``: allocations beyond it fail with
    an error the harness sees, instead of the kernel's OOM killer picking a process."""
    cap = _address_space_bytes() + limit
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    return cap


def _cap_cuda_memory(limit: int, results: _Results) -> int:
    """The caching allocator stops at the cap (per-process fraction); a watchdog thread ends the
    process if device memory still grows beyond it (allocations outside the allocator)."""
    free, total = torch.cuda.mem_get_info()  # creates the context first
    used_before = total - free
    torch.cuda.set_per_process_memory_fraction(min(1.0, limit / total))

    def watch() -> None:
        while True:
            time.sleep(_WATCHDOG_PERIOD_S)
            free_now, _ = torch.cuda.mem_get_info()
            if total - free_now > used_before + limit + _CUDA_SLACK:
                results.write({"event": "end", "status": "oom", "iterations": -1,
                               "error": {"type": "watchdog", "line": 0,
                                         "message": f"device memory over the {limit} B cap"}})
                os._exit(WATCHDOG_EXIT)

    threading.Thread(target=watch, name="torchmemlint-watchdog", daemon=True).start()
    return limit


def _seed(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed)


def _is_oom(error: BaseException) -> bool:
    if isinstance(error, (MemoryError, torch.OutOfMemoryError)):
        return True
    return isinstance(error, RuntimeError) and any(word in str(error).lower() for word in _OOM_WORDS)


def _script_line(tb: Optional[types.TracebackType], filename: str) -> int:
    line = 0
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _frame_roots(tb: Optional[types.TracebackType], filename: str) -> list[tuple[str, Any]]:
    """Locals of the script's functions the replay stopped in (innermost first)."""
    roots = []
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_filename == filename and frame.f_code.co_name != "<module>":
            roots[:0] = [(f"{frame.f_code.co_name}(): {name}", value) for name, value in frame.f_locals.items()]
        tb = tb.tb_next
    return roots


def _survivors(meter: LiveStorageMeter, first: int, last: int) -> tuple[list[dict], dict]:
    """Storages created in iterations ``first..last`` and still alive, grouped by iteration,
    creation line and device; and their sizes by storage key for the retention walk."""
    groups: dict[tuple[int, int, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    sizes = {}
    for ref in meter.live_storages():
        if first <= ref.iteration <= last:
            group = groups[(ref.iteration, ref.line, ref.device)]
            group[0] += 1
            group[1] += ref.nbytes
            group[2] += cuda_rounded(ref.nbytes)
            sizes[ref.key] = ref.nbytes
    return ([{"iteration": k, "line": line, "device": device, "storages": n, "bytes": b, "rounded": r}
             for (k, line, device), (n, b, r) in sorted(groups.items())], sizes)


def _explain_survivors(end: dict, meter: LiveStorageMeter, spec: dict, closed: int, namespace: dict,
                       tb: Optional[types.TracebackType]) -> None:
    """Survivors: storages created in a measured iteration and alive two or more iterations
    later (after an out-of-memory error, the failed iteration counts as one later). Skipping the
    warm-up, but never all of a short run."""
    last = closed - 1 if end["status"] == "oom" else closed - 2
    first = min(spec["warmup"] + 1, max(last, 1))
    groups, sizes = _survivors(meter, first, last)
    end["survivors"] = groups
    end["survivor_iterations"] = list(range(first, last + 1))
    if spec["explain"] and sizes:
        roots = [(name, value) for name, value in namespace.items() if not name.startswith("__")]
        end["retained_by"] = credit_survivors(roots + _frame_roots(tb, spec["filename"]), sizes)


def replay(spec: dict) -> int:
    """Run one instrumented script as ``__main__`` under the meters; the exit status says
    nothing: the results file does."""
    results = _Results(spec["results"])
    filename = spec["filename"]
    # An emergency reserve, released before the last record is written after an out-of-memory
    # error, so that writing it does not fail too.
    reserve = bytearray(1 << 20)
    use_cuda = spec["device"] != "cpu" and torch.cuda.is_available()
    if spec["device"] == "cuda" and not use_cuda:
        results.write({"event": "end", "status": "error", "iterations": 0, "error": {
            "type": "DeviceError", "line": 0, "message": "--device cuda, but torch.cuda.is_available() is False"}})
        return 0
    if spec.get("workers"):
        return _replay_workers(spec, results, use_cuda)
    if use_cuda:
        cap = _cap_cuda_memory(spec["memory_limit"], results)
    else:
        cap = _cap_host_memory(spec["memory_limit"])
    _seed(spec["seed"])
    device_name = torch.cuda.get_device_name() if use_cuda else "cpu"
    results.write({"event": "start", "device": "cuda" if use_cuda else "cpu", "device_name": device_name,
                   "torch": torch.__version__, "memory_cap": cap, "pid": os.getpid(),
                   "native_meter": NativeHeapMeter().source})

    started = time.perf_counter()
    boundary_meters: dict[str, Any] = {}

    def on_boundary(iteration: int) -> None:
        if use_cuda:
            torch.cuda.synchronize()  # the iteration's kernels belong to its time
        reached = time.perf_counter()
        storage = boundary_meters["storage"]
        # The graph walk and the gradient norm first: the norm's temporaries are freed before the
        # allocator is read, and neither allocates through the storage meter's mode.
        graph = boundary_meters["graph"].sample(storage.live_tensors())
        grad_norm = gradient_norm() if spec.get("gradients") else 0.0
        record = {"event": "boundary", "iteration": iteration, "graph": graph, "grad_norm": grad_norm,
                  "storage": storage.sample(), "time": round(reached - started, 6),
                  "heap": boundary_meters["heap"].sample(restart=iteration == spec["warmup"])}
        if "cuda" in boundary_meters:
            record["cuda"] = boundary_meters["cuda"].sample()
        record["native"] = boundary_meters["native"].sample()
        # what measuring took, not counted in the next iteration's time
        record["sampling_s"] = round(time.perf_counter() - reached, 6)
        results.write(record)

    controller = ReplayController(spec["cap"], on_boundary)
    setattr(builtins, CONTROLLER, controller)
    main, code = _main_module(spec)
    # a Lightning or Hugging Face trainer the script starts runs just past the cap, without extras
    drive.install(spec.get("phase", "train"), spec["cap"] + 1, use_cuda)
    # In the original and its twin alike: the history's records are on the native heap, which the
    # graph meter's bytes are paired differences of
    history = use_cuda and allocation_history_start()

    end: dict[str, Any] = {"event": "end"}
    tb = None
    storage_meter = LiveStorageMeter(controller, filename)
    boundary_meters["storage"] = storage_meter
    if use_cuda:
        boundary_meters["cuda"] = CudaMeter()
    boundary_meters["heap"] = HeapMeter()
    boundary_meters["graph"] = GraphMeter()
    boundary_meters["native"] = NativeHeapMeter()
    # Every replay starts the cyclic collector from the same phase: otherwise a replay forked
    # after more allocations in the server collects cycles (autograd graphs kept by reference
    # cycles) at other iterations than its twin, and the paired difference reflects that timing.
    gc.collect()
    with storage_meter:
        try:
            exec(code, main.__dict__)
            controller.finish()
            end["status"] = "finished"
        except StopReplay as stop:
            end["status"] = "capped"
            tb = stop.__traceback__
        except SystemExit as exit_request:
            controller.finish()
            end.update(_exited(exit_request, filename))
        except BaseException as error:  # the user's code failed: that is a result, not our crash
            del reserve
            traceback.print_exc()  # into the replay's stderr file, with the user's line numbers
            end["status"] = "oom" if _is_oom(error) else "error"
            end["error"] = {"type": type(error).__name__, "message": str(error)[:2000],
                            "line": _script_line(error.__traceback__, filename)}
            tb = error.__traceback__
            del error
    if controller.stopped:
        end["status"] = "capped"  # the script caught StopReplay and went on
    end["iterations"] = controller.closed
    if end["status"] in ("capped", "finished", "oom"):
        boundary_meters["heap"].stop()  # the retention walk allocates a lot and need not be traced
        try:
            _explain_survivors(end, storage_meter, spec, controller.closed, main.__dict__, tb)
            if history and spec["explain"]:
                end["allocation_sites"] = allocation_sites(storage_meter, end["survivor_iterations"],
                                                           os.path.dirname(filename))
        except MemoryError:  # after an out-of-memory end there may be no room for the walk
            pass
    results.write(end)
    return 0


def _main_module(spec: dict) -> tuple[types.ModuleType, types.CodeType]:
    """A fresh ``__main__`` for the script (``__file__`` its copy, ``sys.argv`` and
    ``sys.path[0]`` as if started directly) and its compiled code."""
    filename = spec["filename"]
    main = types.ModuleType("__main__")
    main.__dict__.update({"__file__": filename, "__builtins__": builtins, "__spec__": None})
    sys.modules["__main__"] = main
    sys.argv = [filename, *spec["argv"]]
    sys.path[0] = os.path.dirname(filename)
    with open(spec["source"], encoding="utf-8") as source:
        return main, compile(source.read(), filename, "exec")


def _exited(exit_request: SystemExit, filename: str) -> dict:
    """``sys.exit()`` and ``sys.exit(0)`` end normally; ``sys.exit(3)``, ``sys.exit("message")`` fail."""
    if exit_request.code in (None, 0):
        return {"status": "finished"}
    message = f"the script exited with status {exit_request.code!r}"
    line = _script_line(exit_request.__traceback__, filename)
    return {"status": "error", "error": {"type": "SystemExit", "message": message, "line": line}}


def _replay_workers(spec: dict, results: _Results, use_cuda: bool) -> int:
    """A one-shot replay of a script whose DataLoader workers may use CUDA (TML010): the script
    runs unchanged while ``WorkerWatch`` reads the device memory of every process below this
    one; the replay ends when the workers' figures settle, or when the script ends or fails (the
    error of CUDA in a forked worker is the finding confirmed). Nothing here touches CUDA before
    the script does: a CUDA context made here would be inherited by every forked worker. On the
    CPU nothing runs: there is no CUDA to use in a worker."""
    results.write({"event": "start", "device": "cuda" if use_cuda else "cpu", "torch": torch.__version__,
                   "device_name": device_name() if use_cuda else "cpu", "memory_cap": 0, "pid": os.getpid(),
                   "native_meter": ""})
    if not use_cuda:
        results.write({"event": "end", "status": "finished", "iterations": 0, "workers": {"cuda": False}})
        return 0
    ending = threading.Lock()  # whoever ends the replay first writes the last record

    def settled(figures: dict) -> None:
        if ending.acquire(blocking=False):
            results.write({"event": "end", "status": "capped", "iterations": 0, "workers": figures})
            os._exit(0)

    watch = WorkerWatch(settled)
    _seed(spec["seed"])
    main, code = _main_module(spec)
    end: dict[str, Any] = {"event": "end", "iterations": 0}
    watch.start()
    try:
        exec(code, main.__dict__)
        end["status"] = "finished"
    except SystemExit as exit_request:
        end.update(_exited(exit_request, spec["filename"]))
    except BaseException as error:
        traceback.print_exc()
        end["status"] = "oom" if _is_oom(error) else "error"
        # a worker's error comes wrapped in its whole traceback: keep enough to find it in
        end["error"] = {"type": type(error).__name__, "message": str(error)[:4000],
                        "line": _script_line(error.__traceback__, spec["filename"])}
    watch.stop()
    ending.acquire()
    watch.poll()
    end["workers"] = watch.figures()
    results.write(end)
    return 0


def child_main(spec: dict, new_session: bool = True, before_exit: Optional[Callable[[], None]] = None) -> None:
    """Entry point of a forked replay child: own session (so that a timeout kills its worker
    processes too), own working directory, output to files; never returns. A torchrun worker
    (``verify/rank.py``) already leads a session of its own (``new_session=False``) and waits
    for the other ranks before it exits (``before_exit``)."""
    status = 1
    try:
        if new_session:
            os.setsid()
        for fd, name in ((1, "stdout"), (2, "stderr")):
            target = os.open(spec[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(target, fd)
            os.close(target)
        sys.stdout = open(1, "w", encoding="utf-8", errors="replace", closefd=False, buffering=1)
        sys.stderr = open(2, "w", encoding="utf-8", errors="replace", closefd=False, buffering=1)
        os.chdir(spec["workdir"])
        if spec["device"] == "cpu":
            os.environ["CUDA_VISIBLE_DEVICES"] = ""
        status = replay(spec)
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            if before_exit is not None:
                before_exit()
        finally:
            os._exit(status)
