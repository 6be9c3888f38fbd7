"""The device memory of a replay's DataLoader workers (TML010: CUDA used in worker code), inside
the replay child. Nothing here imports torch at module level.

A worker that touches CUDA either fails (``Cannot re-initialize CUDA in forked subprocess``:
the parent had initialised CUDA before forking it), which the replay reports as the error it is,
or creates a CUDA context of its own: device memory per worker process that no allocator
counter of the parent sees. ``WorkerWatch`` polls the device memory of every process on the
GPUs and keeps, for each process descending from the replay, the most it held. Sources, the
first that answers: NVML through ``pynvml`` (``nvidia-ml-py``), ``torch.cuda.list_gpu_processes``
(also NVML underneath, or AMD's SMI), ``nvidia-smi --query-compute-apps``.
"""
from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from typing import Callable, Optional

# How often the GPUs' processes are read; a CUDA context takes a fraction of a second to appear.
POLL_S = 0.2
# Once a worker holds device memory, how long its figures must stay unchanged before the replay
# ends (every worker started by then has made its context), and the most it waits in all.
SETTLE_S = 2.0
LONGEST_S = 20.0

_MIB = 2**20


def _nvml() -> Optional[Callable[[], dict[int, int]]]:
    try:
        import pynvml  # noqa: PLC0415 (optional: nvidia-ml-py)
        pynvml.nvmlInit()
        handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
    except Exception:  # not installed, no driver, no permission: the next source
        return None

    def read() -> dict[int, int]:
        usage: dict[int, int] = {}
        for handle in handles:
            for process in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
                usage[process.pid] = usage.get(process.pid, 0) + (process.usedGpuMemory or 0)
        return usage

    return read


_LISTED = re.compile(r"process\s+(\d+)\s+uses\s+([\d.]+)\s+MB", re.IGNORECASE)


def _torch_listing() -> Optional[Callable[[], dict[int, int]]]:
    import torch  # noqa: PLC0415 (the replay child has it imported already)

    def read() -> dict[int, int]:
        usage: dict[int, int] = {}
        for device in range(torch.cuda.device_count()):
            for pid, mb in _LISTED.findall(torch.cuda.list_gpu_processes(device)):
                usage[int(pid)] = usage.get(int(pid), 0) + int(float(mb) * _MIB)
        return usage

    try:
        probe = torch.cuda.list_gpu_processes(0)
    except Exception:
        return None
    return read if probe.startswith("GPU") else None  # else: "pynvml module not found ..."


def _nvidia_smi() -> Optional[Callable[[], dict[int, int]]]:
    command = ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"]

    def read() -> dict[int, int]:
        usage: dict[int, int] = {}
        output = subprocess.run(command, capture_output=True, text=True, timeout=10, check=True).stdout
        for line in output.splitlines():
            fields = [field.strip() for field in line.split(",")]
            if len(fields) == 2 and fields[0].isdigit() and fields[1].isdigit():
                usage[int(fields[0])] = usage.get(int(fields[0]), 0) + int(fields[1]) * _MIB
        return usage

    try:
        read()
    except (OSError, subprocess.SubprocessError):
        return None
    return read


def device_name() -> str:
    """The first GPU's name from NVML (without making a CUDA context), or "cuda"."""
    try:
        import pynvml  # noqa: PLC0415
        pynvml.nvmlInit()
        name = pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(0))
    except Exception:
        return "cuda"
    return name.decode() if isinstance(name, bytes) else str(name)


def device_memory_reader() -> tuple[str, Optional[Callable[[], dict[int, int]]]]:
    """The first source of per-process device memory that answers, and its name."""
    for name, make in (("nvml", _nvml), ("torch.cuda.list_gpu_processes", _torch_listing),
                       ("nvidia-smi", _nvidia_smi)):
        reader = make()
        if reader is not None:
            return name, reader
    return "", None


def descendants(root: int) -> set[int]:
    """Every living process below ``root`` (from ``/proc``)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


class WorkerWatch:
    """Polls, from a thread of the replay child, the device memory of the child and of every
    process below it. ``on_settled`` is called (from the thread) once workers hold device memory
    and nothing has changed for ``SETTLE_S``; ``figures()`` is what was seen. ``reader``: the
    source's name and its reading of ``{pid: device bytes}`` (``device_memory_reader()``)."""

    def __init__(self, on_settled: Callable[[dict], None],
                 reader: Optional[tuple[str, Callable[[], dict[int, int]]]] = None) -> None:
        self.source, self._read = reader or device_memory_reader()
        self._on_settled = on_settled
        self._pid = os.getpid()
        self._before: set[int] = set()
        self._workers: dict[int, int] = {}  # pid -> most device bytes seen
        self._unattributed: dict[int, int] = {}  # processes new on the GPU that are not found below the replay
        self._parent = 0
        self._seen: set[int] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def start(self) -> None:
        if self._read is not None:
            self._before = set(self._safe_read())
            threading.Thread(target=self._run, name="torchmemlint-workers", daemon=True).start()

    def _safe_read(self) -> dict[int, int]:
        try:
            return self._read() if self._read is not None else {}
        except Exception:  # a poll that fails (a process ending under it) is skipped
            return {}

    def poll(self) -> bool:
        """One reading; whether a figure changed."""
        usage = self._safe_read()
        below = descendants(self._pid)
        changed = False
        with self._lock:
            self._seen |= below
            self._parent = max(self._parent, usage.get(self._pid, 0))
            for pid, nbytes in usage.items():
                if pid == self._pid or pid in self._before:
                    continue
                table = self._workers if pid in below or pid in self._workers else self._unattributed
                if nbytes > table.get(pid, 0):
                    table[pid] = nbytes
                    changed = True
        return changed

    def _run(self) -> None:
        first_seen: Optional[float] = None
        last_change = time.monotonic()
        while not self._stop.wait(POLL_S):
            if self.poll():
                last_change = time.monotonic()
            if self._workers or self._unattributed:
                now = time.monotonic()
                first_seen = first_seen or now
                if now - last_change >= SETTLE_S or now - first_seen >= LONGEST_S:
                    self._on_settled(self.figures())
                    return

    def stop(self) -> None:
        self._stop.set()

    def figures(self) -> dict:
        """``{"cuda", "source", "parent_bytes", "processes", "workers": [{"pid", "device_bytes"}],
        "attributed"}``: ``attributed`` is False when the GPU's process ids could not be matched
        with the replay's (another PID namespace) and the processes new on the GPU are reported."""
        with self._lock:
            attributed = bool(self._workers) or not self._unattributed
            table = self._workers if attributed else self._unattributed
            return {"cuda": True, "source": self.source, "parent_bytes": self._parent,
                    "processes": len(self._seen),
                    "workers": [{"pid": pid, "device_bytes": nbytes} for pid, nbytes in sorted(table.items())],
                    "attributed": attributed}
