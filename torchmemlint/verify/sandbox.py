"""Containment of the replays: which processes belong to them, how much memory they take
together, how they all end, and the copy of the user's folder they run in.

A replayed script is the user's code: it may fork, detach (``os.setsid``), allocate in every
process it starts, read stdin, and write or delete files beside itself. The replay machinery
(``runner`` in the parent, ``server`` in the replay server) uses this module so that:

- **every process of a replay is found**, even one that detached from the process group and
  whose parent died: the replay server is a child subreaper (orphans of a replay are adopted by
  it, not by init), and every process forked from it carries the server's token in its
  environment (what ``/proc/PID/environ`` shows is the environment the process image started
  with; a fork keeps it, and an ``exec`` passes ``os.environ`` on unless given another one);
- where a cgroup v2 can be made inside this process's own, **each replay runs in a cgroup of its
  own**: it holds every process of the replay, however detached, and ``cgroup.kill`` ends them;
- **memory is capped over the whole tree**: by the cgroup's ``memory.max`` where its memory
  controller is enabled (rarely: see ``Cgroup``), and always by a watchdog that sums the
  proportional anonymous memory (``Pss_Anon + Pss_Shmem + SwapPss`` of
  ``/proc/PID/smaps_rollup``) of the server and the replay's processes: pages the forked replay
  still shares with the server count once, so forking workers costs nothing until they write;
- **everything ends**: the processes found are killed by ``pidfd`` (no signal for a reused pid),
  again until none is left, since one may fork between a scan and its kill;
- **the user's files are never touched**: the script runs as a copy, in a copy of its folder
  (bounded in size) inside a temporary folder.

None of this is a security sandbox: the script can still read and write any path it names
(absolute paths, the home folder) and use the network.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import signal
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Iterator, Optional

# The replay server's token, in the environment of the server and of every process of its replays.
TOKEN_VARIABLE = "TORCHMEMLINT_REPLAY_SERVER"
DEFAULT_COPY_LIMIT = 64 * 2**20
MAX_COPIED_FILES = 10_000
# Entries looked at before the walk of a script's folder stops (a script in a home folder).
MAX_EXAMINED_ENTRIES = 20_000
# Folders never copied: version control, environments, caches (a venv is recognised by its pyvenv.cfg).
_SKIPPED_FOLDERS = {"__pycache__", "node_modules", "site-packages", "wandb", "mlruns"}
_KILL_ROUNDS = 500
_KILL_PAUSE_S = 0.01
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_MEMORY_FIELDS = (b"Pss_Anon:", b"Pss_Shmem:", b"SwapPss:")
_MEMORY_FIELDS_OLD_KERNELS = (b"Pss:", b"SwapPss:")  # before Linux 5.7: no Pss_Anon


def _prctl(option: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):  # not Linux
        return False


def become_subreaper() -> bool:
    """Orphaned descendants of this process are re-parented to it instead of init."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def die_with_parent() -> bool:
    """This process gets SIGKILL when its parent dies."""
    return _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


@dataclass(frozen=True)
class _Process:
    pid: int
    parent: int
    state: bytes
    start: int  # clock ticks after boot: with the pid, names one process even after pid reuse


def _processes() -> Iterator[_Process]:
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                text = stat.read()
        except OSError:  # ended meanwhile
            continue
        fields = text[text.rindex(b")") + 2:].split()  # the command name may hold spaces and ')'
        yield _Process(int(entry.name), int(fields[1]), fields[0], int(fields[19]))


def _start_time(pid: int) -> Optional[int]:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read()
    except OSError:
        return None
    return int(text[text.rindex(b")") + 2:].split()[19])


def _carries(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            return marker in environ.read().split(b"\0")
    except OSError:  # ended, or not ours to read
        return False


def _kill(pid: int, start: int) -> None:
    """SIGKILL to the process ``pid`` started at ``start``, never to a later one with its pid."""
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):  # ended already, or no pidfd (Python < 3.9, Linux < 5.3)
        if _start_time(pid) == start:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        return
    try:
        if _start_time(pid) == start:  # the handle holds the process we found
            signal.pidfd_send_signal(handle, signal.SIGKILL)
    except OSError:
        pass
    finally:
        os.close(handle)


def _anonymous_memory(pid: int) -> int:
    """Bytes of private and shared-anonymous memory of ``pid``, shared pages divided among the
    processes that map them."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as rollup:
            lines = rollup.read().splitlines()
    except OSError:
        return 0
    wanted = _MEMORY_FIELDS if any(line.startswith(b"Pss_Anon:") for line in lines) else _MEMORY_FIELDS_OLD_KERNELS
    return sum(int(line.split()[1]) * 1024 for line in lines if line.startswith(wanted))


class ReplayProcesses:
    """The processes of the replays of one replay server: its descendants, and every process
    carrying its token (a detached one whose parent died, if the server itself died)."""

    def __init__(self, server_pid: int, token: str) -> None:
        self.server_pid = server_pid
        self._marker = f"{TOKEN_VARIABLE}={token}".encode()

    def find(self) -> dict[int, int]:
        """Running (not zombie) replay processes: pid to start time."""
        children: dict[int, list[_Process]] = {}
        found: dict[int, int] = {}
        me = os.getpid()
        for process in _processes():
            children.setdefault(process.parent, []).append(process)
            if process.pid not in (self.server_pid, me) and process.state not in (b"Z", b"X") and \
                    _carries(process.pid, self._marker):
                found[process.pid] = process.start
        queue = deque(children.get(self.server_pid, ()))
        while queue:
            process = queue.popleft()
            if process.state not in (b"Z", b"X"):
                found[process.pid] = process.start
            queue.extend(children.get(process.pid, ()))
        return found

    def memory(self) -> int:
        """Anonymous memory of the server and the replay's processes together."""
        return sum(_anonymous_memory(pid) for pid in (self.server_pid, *self.find()))

    def kill(self) -> bool:
        """Kill every replay process, scanning again until none is left; False if some survived
        every round (a process stuck in the kernel)."""
        for _ in range(_KILL_ROUNDS):
            found = self.find()
            if not found:
                return True
            for pid, start in found.items():
                _kill(pid, start)
            time.sleep(_KILL_PAUSE_S)
        return not self.find()


class MemoryWatch:
    """The watchdog's cap: the replay's tree may take ``limit`` bytes beyond what the server and
    the just-forked replay took when it started."""

    def __init__(self, processes: ReplayProcesses, limit: int) -> None:
        self._processes = processes
        self.limit = limit
        self._baseline = processes.memory()
        self.peak = 0

    def over(self) -> bool:
        used = self._processes.memory() - self._baseline
        self.peak = max(self.peak, used)
        return used > self.limit


class Cgroup:
    """A cgroup v2 of its own for one replay, made inside this process's cgroup where that is
    writable. It holds every process of the replay whatever it does (``cgroup.kill`` ends them
    all at once), and, where the memory controller is enabled for it, caps their memory
    together (``memory.max``, no swap, the whole group killed when it runs out). Linux enables a
    controller for a child cgroup only when the parent has no processes of its own, which rules
    it out in the common case of a command started in a shell, container or CI job: there the
    watchdog caps the memory."""

    def __init__(self, path: str, caps_memory: bool = False) -> None:
        self.path = path
        self.caps_memory = caps_memory

    @classmethod
    def create(cls, limit: int, name: str) -> Optional["Cgroup"]:
        """None where there is no cgroup v2 hierarchy to write in (cgroup v1 only, read-only)."""
        parent = _own_cgroup_v2()
        if parent is None:
            return None
        path = os.path.join(parent, name)
        try:
            os.mkdir(path)
        except OSError:
            return None
        group = cls(path, caps_memory=os.path.exists(os.path.join(path, "memory.max")))
        if group.caps_memory:
            try:
                group._write("memory.max", str(limit))
                group._write("memory.oom.group", "1")
                if os.path.exists(os.path.join(path, "memory.swap.max")):
                    group._write("memory.swap.max", "0")
            except OSError:
                group.caps_memory = False
        return group

    def _write(self, name: str, value: str) -> None:
        with open(os.path.join(self.path, name), "w") as file:
            file.write(value)

    def join(self) -> None:
        """Move the calling process into the group (its children then start in it)."""
        self._write("cgroup.procs", "0")

    def out_of_memory(self) -> bool:
        try:
            with open(os.path.join(self.path, "memory.events")) as events:
                counts = dict(line.split() for line in events)
        except OSError:
            return False
        return int(counts.get("oom_kill", 0)) > 0 or int(counts.get("oom_group_kill", 0)) > 0

    def kill(self) -> None:
        """SIGKILL to every process in the group (Linux 5.14+; before, the sweep does it)."""
        try:
            self._write("cgroup.kill", "1")
        except OSError:
            pass

    def remove(self) -> None:
        for _ in range(_KILL_ROUNDS):  # a group can be removed once its last process is gone
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError:
                self.kill()
                time.sleep(_KILL_PAUSE_S)


def _own_cgroup_v2() -> Optional[str]:
    """The folder of this process's cgroup in the cgroup v2 hierarchy (on a hybrid system, the
    ``unified`` one, which tracks processes but has no memory controller), or None."""
    try:
        with open("/proc/self/cgroup") as own:
            paths = [line[3:].strip() for line in own if line.startswith("0::")]
        with open("/proc/self/mountinfo") as mounts:
            mount_points = [line.split(" - ")[0].split()[4] for line in mounts if " - cgroup2 " in line]
    except OSError:
        return None
    if not paths or not mount_points:
        return None
    return os.path.join(mount_points[0], paths[0].lstrip("/"))


@dataclass
class FolderCopy:
    """What of a script's folder a replay gets: files nearest the script first (breadth first),
    until ``limit`` bytes or ``MAX_COPIED_FILES`` files; hidden folders, caches and virtual
    environments are left out, and symbolic links to folders are not followed (one to a file is
    copied as the file, so that writing it cannot reach the original). The walk stops after
    ``MAX_EXAMINED_ENTRIES`` entries (``complete`` is then False)."""

    folder: str
    files: list[tuple[str, int]] = field(default_factory=list)  # path relative to folder, bytes
    skipped_files: int = 0
    skipped_bytes: int = 0
    complete: bool = True

    @property
    def copied_bytes(self) -> int:
        return sum(size for _, size in self.files)

    @classmethod
    def plan(cls, folder: str, limit: int, script: str) -> "FolderCopy":
        """``script`` (in ``folder``) is always copied."""
        plan = cls(folder)
        budget = limit
        examined = 0
        queue = deque([""])
        while queue:
            relative = queue.popleft()
            try:
                entries = sorted(os.scandir(os.path.join(folder, relative)), key=lambda entry: entry.name)
            except OSError:
                continue
            examined += len(entries)
            if examined > MAX_EXAMINED_ENTRIES and relative:
                plan.complete = False
                break
            for entry in entries:
                path = os.path.join(relative, entry.name)
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if not _skipped_folder(entry):
                            queue.append(path)
                        continue
                    if not entry.is_file():  # follows a link: a link to a file is copied as the file
                        continue
                    size = entry.stat().st_size
                except OSError:
                    continue
                if path == script or (size <= budget and len(plan.files) < MAX_COPIED_FILES):
                    plan.files.append((path, size))
                    budget -= size
                else:
                    plan.skipped_files += 1
                    plan.skipped_bytes += size
        return plan

    def copy_to(self, destination: str) -> None:
        os.makedirs(destination, exist_ok=True)
        for path, _ in self.files:
            target = os.path.join(destination, path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            try:
                shutil.copy2(os.path.join(self.folder, path), target)
            except OSError:  # unreadable or gone meanwhile: the replay sees it missing
                pass


def _skipped_folder(entry: os.DirEntry) -> bool:
    return (entry.name.startswith(".") or entry.name in _SKIPPED_FOLDERS or entry.name.endswith(".egg-info")
            or os.path.exists(os.path.join(entry.path, "pyvenv.cfg")))
