"""Running replays: the parent's side of the replay server (``server.py``).

The user's code runs only in a replay child: one forked process per replay, in its own session
and temporary working directory, with seeds set, ``TORCH_COMPILE_DISABLE=1``, loggers offline,
a memory cap (``RLIMIT_AS`` on the CPU; on CUDA a per-process memory fraction and a watchdog)
and a wall-clock timeout enforced from here by killing its process group.
"""
from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import IO, Optional

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


class ReplayError(Exception):
    """The replay machinery itself cannot run (no torch, server died); message for the user."""


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 120.0
    memory_limit: int = 4 * 2**30  # bytes above the child's footprint when the script starts
    device: str = "auto"  # "auto" (CUDA when available), "cpu" or "cuda"
    seed: int = 0


@dataclass(frozen=True)
class RunRequest:
    source: str  # the instrumented script
    filename: str  # the user's file (absolute): tracebacks and creation lines name it
    argv: tuple[str, ...] = ()
    cap: int = 10
    warmup: int = 2
    explain: bool = False
    gradients: bool = False  # also measure the gradient norm at every boundary


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


class ReplayServer:
    """A running replay server; use as a context manager. ``run`` replays one script."""

    def __init__(self) -> None:
        self._process: Optional[subprocess.Popen] = None
        self._scratch = ""
        self.torch_version = ""

    def __enter__(self) -> "ReplayServer":
        self._scratch = tempfile.mkdtemp(prefix="torchmemlint-verify-")
        self._process = subprocess.Popen(
            [sys.executable, "-m", "torchmemlint.verify.server"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=self._scratch, env=_server_environment(), text=True, bufsize=1,
        )
        hello = self._read(_SERVER_START_TIMEOUT_S)
        if hello is None or not hello.get("ready"):
            self.__exit__(None, None, None)
            reason = hello.get("error") if hello else "the replay server did not start"
            raise ReplayError(reason)
        self.torch_version = hello["torch"]
        return self

    def __exit__(self, *exc_info) -> None:
        if self._process is not None:
            if self._process.stdin:
                self._process.stdin.close()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None
        shutil.rmtree(self._scratch, ignore_errors=True)

    def _read(self, timeout: float) -> Optional[dict]:
        """The server's next line, or None on timeout or when it died."""
        stream: IO[str] = self._process.stdout  # type: ignore[union-attr,assignment]
        ready, _, _ = select.select([stream], [], [], max(timeout, 0.0))
        if not ready:
            return None
        line = stream.readline()
        return json.loads(line) if line else None

    def run(self, request: RunRequest, limits: Limits) -> RunOutcome:
        run_dir = tempfile.mkdtemp(prefix="run-", dir=self._scratch)
        workdir = os.path.join(run_dir, "cwd")
        os.mkdir(workdir)
        paths = {name: os.path.join(run_dir, name) for name in ("script.py", "results.jsonl", "stdout", "stderr")}
        with open(paths["script.py"], "w", encoding="utf-8") as script:
            script.write(request.source)
        spec = {
            "source": paths["script.py"], "filename": request.filename, "argv": list(request.argv),
            "cap": request.cap, "warmup": request.warmup, "explain": request.explain, "gradients": request.gradients,
            "results": paths["results.jsonl"], "stdout": paths["stdout"], "stderr": paths["stderr"],
            "workdir": workdir, "memory_limit": limits.memory_limit, "device": limits.device, "seed": limits.seed,
        }
        started = time.monotonic()
        try:
            self._process.stdin.write(json.dumps(spec) + "\n")  # type: ignore[union-attr]
            self._process.stdin.flush()  # type: ignore[union-attr]
        except BrokenPipeError:
            raise ReplayError("the replay server stopped unexpectedly") from None
        hello = self._read(30.0)
        if hello is None or "pid" not in hello:
            raise ReplayError("the replay server stopped unexpectedly")
        pid = hello["pid"]
        ended = self._read(limits.timeout_s)
        timed_out = ended is None
        _kill_group(pid)  # the replay's leftovers (loader workers ...), or the replay on timeout
        if timed_out:
            ended = self._read(30.0)
            if ended is None:
                raise ReplayError("the replay server stopped unexpectedly")
        outcome = _collect(paths, timed_out, ended, request.cap)
        outcome.wall_s = time.monotonic() - started
        shutil.rmtree(run_dir, ignore_errors=True)
        return outcome


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
