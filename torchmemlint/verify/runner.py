"""Running replays: the parent's side of the replay server (``server.py``).

The user's code runs only in a replay child: one forked process per replay, in its own session,
with stdin at end of file, seeds set, ``TORCH_COMPILE_DISABLE=1`` and loggers offline. It runs
as a copy of the script in a copy of its folder (``sandbox.FolderCopy``), so that the user's
files are never touched. Limits: the child's own memory cap (``RLIMIT_AS`` on the CPU; on CUDA a
per-process memory fraction and a watchdog, see ``harness``), a cap over all the replay's
processes (a cgroup where one can be made, and always a watchdog polled from here: see
``sandbox``), and a wall-clock timeout. When a replay ends, however it ends, every process of it
is killed; a replay that kills the replay server costs that replay only: the next one starts a
new server.
"""
from __future__ import annotations

import json
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import IO, Optional

from torchmemlint.verify.sandbox import (
    DEFAULT_COPY_LIMIT, TOKEN_VARIABLE, Cgroup, FolderCopy, MemoryWatch, ReplayProcesses,
)

# Settings that keep common training scripts off the network and away from compilation (the
# replay must measure eager code and must not upload anything).
REPLAY_ENVIRONMENT = {
    "TORCH_COMPILE_DISABLE": "1",
    # torch.cuda.is_available() without creating CUDA state that a fork would inherit broken
    "PYTORCH_NVML_BASED_CUDA_CHECK": "1",
    "TORCHDYNAMO_DISABLE": "1",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    "MPLBACKEND": "Agg",
    "WANDB_MODE": "offline",
    "WANDB_SILENT": "true",
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "NEPTUNE_MODE": "offline",
    "COMET_MODE": "offline",
    "MLFLOW_TRACKING_URI": "file:./mlruns",
    "DISABLE_MLFLOW_INTEGRATION": "TRUE",
    "TENSORBOARD_LOGDIR": "./runs",
    # glibc's per-thread caches hold freed chunks that mallinfo2 counts as in use: without them
    # the native-heap meter reads what is really allocated (the autograd graph's nodes)
    "GLIBC_TUNABLES": "glibc.malloc.tcache_count=0",
}
_SERVER_START_TIMEOUT_S = 300.0
_STDERR_TAIL_CHARS = 2000
# How often the watchdog sums the memory of the replay's processes: a script allocating 1 GB/s
# can overshoot the cap by half a gigabyte before it is stopped (a cgroup, where there is one,
# stops it at once).
_WATCH_PERIOD_S = 0.5


class ReplayError(Exception):
    """The replay machinery itself cannot run (no torch, server died); message for the user."""


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 120.0
    memory_limit: int = 4 * 2**30  # bytes above the replay's footprint when the script starts
    device: str = "auto"  # "auto" (CUDA when available), "cpu" or "cuda"
    seed: int = 0
    copy_limit: int = DEFAULT_COPY_LIMIT  # bytes of the script's folder copied for the replay


@dataclass(frozen=True)
class RunRequest:
    source: str  # the instrumented script
    filename: str  # the user's file (absolute): tracebacks and creation lines name it
    argv: tuple[str, ...] = ()
    cap: int = 10
    warmup: int = 2
    explain: bool = False
    gradients: bool = False  # also measure the gradient norm at every boundary
    phase: str = "train"  # the framework phase the flagged function runs in (``drive.PHASES``)
    workers: bool = False  # a one-shot watch of the DataLoader workers' device memory (``workers``)


@dataclass
class RunOutcome:
    """What one replay produced. ``status``: capped (reached the iteration cap), finished (the
    script ended first), error, oom, timeout, crashed (died without a word, e.g. a signal)."""

    status: str
    boundaries: list[dict] = field(default_factory=list)
    start: dict = field(default_factory=dict)
    end: dict = field(default_factory=dict)
    stderr_tail: str = ""
    wall_s: float = 0.0

    @property
    def iterations(self) -> int:
        return self.boundaries[-1]["iteration"] if self.boundaries else 0


class _ServerGone(Exception):
    """The replay server's stdout closed: it ended."""


class ReplayServer:
    """A running replay server; use as a context manager. ``run`` replays one script."""

    def __init__(self) -> None:
        self._process: Optional[subprocess.Popen] = None
        self._processes: Optional[ReplayProcesses] = None
        self._scratch = ""
        self._replays = 0
        self.torch_version = ""

    def __enter__(self) -> "ReplayServer":
        self._scratch = tempfile.mkdtemp(prefix="torchmemlint-verify-")
        self._start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop()
        shutil.rmtree(self._scratch, ignore_errors=True)

    def _start(self) -> None:
        token = f"{os.getpid()}-{secrets.token_hex(8)}"
        self._process = subprocess.Popen(
            [sys.executable, "-m", "torchmemlint.verify.server"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=self._scratch, env={**_server_environment(), TOKEN_VARIABLE: token}, text=True, bufsize=1,
        )
        self._processes = ReplayProcesses(self._process.pid, token)
        try:
            hello = self._read(_SERVER_START_TIMEOUT_S)
        except _ServerGone:
            hello = None
        if hello is None or not hello.get("ready"):
            self._stop()
            reason = hello.get("error") if hello else "the replay server did not start"
            raise ReplayError(reason)
        self.torch_version = hello["torch"]

    def _stop(self) -> None:
        """End the server (it ends when its stdin closes) and anything left of its replays."""
        if self._process is None:
            return
        if self._process.stdin:
            try:
                self._process.stdin.close()
            except BrokenPipeError:  # it had died
                pass
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._processes.kill()  # type: ignore[union-attr]
        self._process = None

    def _read(self, timeout: float) -> Optional[dict]:
        """The server's next line, or None on timeout; ``_ServerGone`` when it ended."""
        stream: IO[str] = self._process.stdout  # type: ignore[union-attr,assignment]
        ready, _, _ = select.select([stream], [], [], max(timeout, 0.0))
        if not ready:
            return None
        line = stream.readline()
        if not line:
            raise _ServerGone
        return json.loads(line)

    def run(self, request: RunRequest, limits: Limits) -> RunOutcome:
        if self._process is None or self._process.poll() is not None:
            self._stop()
            self._start()  # the previous replay killed the server
        self._replays += 1
        run_dir = tempfile.mkdtemp(prefix="run-", dir=self._scratch)
        folder = os.path.dirname(os.path.abspath(request.filename))
        workdir = os.path.join(run_dir, "cwd")
        script = os.path.basename(request.filename)
        FolderCopy.plan(folder, limits.copy_limit, script).copy_to(workdir)
        paths = {name: os.path.join(run_dir, name) for name in ("script.py", "results.jsonl", "stdout", "stderr")}
        with open(paths["script.py"], "w", encoding="utf-8") as source:
            source.write(request.source)
        cgroup = Cgroup.create(limits.memory_limit, f"torchmemlint-{os.getpid()}-{self._replays}")
        spec = replay_spec(request, limits, paths, workdir, filename=os.path.join(workdir, script),
                           cgroup=cgroup.path if cgroup else None)
        started = time.monotonic()
        try:
            ended, stop = self._replay(spec, limits, started, cgroup)
            if cgroup is not None and cgroup.out_of_memory():
                stop = stop or "memory"
        finally:
            if cgroup is not None:
                cgroup.remove()
        outcome = _collect(paths, stop == "timeout", ended, request.cap)
        if stop == "memory":
            outcome.status = "oom"
            outcome.end = {**outcome.end, "error": {
                "type": "MemoryError", "line": 0,
                "message": f"the replay's processes together took more than the {limits.memory_limit} B cap"}}
        elif stop == "server":
            outcome.status = "crashed"
            outcome.end = {**outcome.end, "error": {
                "type": "ReplayServerDied", "line": 0,
                "message": "the replay server ended during this replay"}}
        outcome.stderr_tail = outcome.stderr_tail.replace(workdir, folder)
        outcome.wall_s = time.monotonic() - started
        shutil.rmtree(run_dir, ignore_errors=True)
        return outcome

    def _replay(self, spec: dict, limits: Limits, started: float, cgroup: Optional[Cgroup]) -> tuple[dict, str]:
        """Run one replay to its end: the server's last word on it, and what stopped it early
        (``timeout``, ``memory``, ``server``: the server died) or "". Nothing of it is left
        running afterwards."""
        processes = self._processes
        assert processes is not None
        try:
            self._process.stdin.write(json.dumps(spec) + "\n")  # type: ignore[union-attr]
            self._process.stdin.flush()  # type: ignore[union-attr]
            hello = self._read(30.0)
        except (BrokenPipeError, _ServerGone):
            hello = None
        if hello is None or "pid" not in hello:
            self._stop()
            return {}, "server"
        pid = hello["pid"]
        watch = MemoryWatch(processes, limits.memory_limit)
        ended: Optional[dict] = None
        stop = ""
        try:
            while ended is None and not stop:
                remaining = started + limits.timeout_s - time.monotonic()
                if remaining <= 0:
                    stop = "timeout"
                else:
                    ended = self._read(min(remaining, _WATCH_PERIOD_S))
                    if ended is None and watch.over():
                        stop = "memory"
            _kill_group(pid)  # the replay's leftovers (loader workers ...), or the replay when stopped
            if cgroup is not None:
                cgroup.kill()
            processes.kill()
            if ended is None:
                ended = self._read(30.0)  # the server saw its child die and swept the rest
                if ended is None:
                    raise _ServerGone
        except _ServerGone:
            if cgroup is not None:
                cgroup.kill()
            self._stop()  # also kills what is left of the replay, found by the server's token
            return {}, "server"
        return ended, stop


def replay_spec(request: RunRequest, limits: Limits, paths: dict, workdir: str, filename: Optional[str] = None,
                cgroup: Optional[str] = None) -> dict:
    """What ``harness.replay`` reads: ``paths`` names the files ``script.py``, ``results.jsonl``,
    ``stdout`` and ``stderr``; ``filename`` is where the script runs (its copy in ``workdir``)."""
    return {
        "source": paths["script.py"], "filename": filename or request.filename, "argv": list(request.argv),
        "cap": request.cap, "warmup": request.warmup, "explain": request.explain, "gradients": request.gradients,
        "phase": request.phase, "workers": request.workers,
        "results": paths["results.jsonl"], "stdout": paths["stdout"], "stderr": paths["stderr"],
        "workdir": workdir, "memory_limit": limits.memory_limit, "device": limits.device, "seed": limits.seed,
        "cgroup": cgroup,
    }


def _server_environment() -> dict:
    environment = {**os.environ, **REPLAY_ENVIRONMENT}
    # The server imports torchmemlint from where this process did (a checkout, not only an install).
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    paths = [package_root, *filter(None, environment.get("PYTHONPATH", "").split(os.pathsep))]
    environment["PYTHONPATH"] = os.pathsep.join(paths)
    return environment


def _kill_group(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _collect(paths: dict, timed_out: bool, ended: dict, cap: int) -> RunOutcome:
    records = []
    if os.path.exists(paths["results.jsonl"]):
        with open(paths["results.jsonl"], encoding="utf-8") as results:
            for line in results:
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError:  # the last line of a killed child may be cut
                    break
    tail = ""
    if os.path.exists(paths["stderr"]):  # not when the server died before forking the replay
        with open(paths["stderr"], encoding="utf-8", errors="replace") as stderr:
            tail = stderr.read()[-_STDERR_TAIL_CHARS:]
    start = next((r for r in records if r["event"] == "start"), {})
    end = next((r for r in records if r["event"] == "end"), {})
    boundaries = [r for r in records if r["event"] == "boundary"]
    if timed_out and boundaries and boundaries[-1]["iteration"] >= cap:
        # Every iteration was measured; the script then caught the stop and went on (``except
        # BaseException`` in a retry loop) until the timeout. The measurements are complete.
        status = "capped"
    elif timed_out:
        status = "timeout"
    elif end:
        status = end["status"]
    else:
        status = "crashed"
        end = {"signal": ended.get("signal"), "exit": ended.get("exit")}
    return RunOutcome(status, boundaries, start, end, tail)
