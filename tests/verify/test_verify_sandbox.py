"""``verify`` contained like a sandbox: scripts that fork past the memory cap, detach from the
process group, delete the files beside them, read stdin, exit with a failure status or kill
the replay server. Each ends in a verdict, with none of the script's processes left running
(checked in /proc, by the pids the scripts write down) and the user's folder unchanged."""
from __future__ import annotations

import hashlib
import os
import textwrap
from pathlib import Path

import pytest

from torchmemlint.diagnostics import Diagnostic
from torchmemlint.verify.runner import Limits
from torchmemlint.verify.sandbox import Cgroup, FolderCopy
from torchmemlint.verify.verifier import FileFindings, Settings, VerifyResult, verify_findings

pytestmark = pytest.mark.slow
MiB = 2**20
MARKER = "kept.append(step)"
# Prefixed to each script: ``note_pid(pid)`` writes a process's pid, start time and cgroup v2 to
# the file named by the first argument (outside the copied folder), for the test to check.
NOTE_PID = """\
import os, sys
def note_pid(pid="self"):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    with open(f"/proc/{pid}/cgroup") as cgroups:
        cgroup = ([line[3:].strip() for line in cgroups if line.startswith("0::")] or ["-"])[0]
    with open(sys.argv[1], "a") as pids:
        pids.write(f"{os.getpid() if pid == 'self' else pid} {fields[19]} {cgroup}\\n")
"""


@pytest.fixture(params=["cgroup", "proc"])
def containment(request, monkeypatch) -> str:
    """A test using it runs twice: with each replay in a cgroup of its own (where one can be
    made here), and with /proc alone, as where none can."""
    if request.param == "proc":
        monkeypatch.setattr(Cgroup, "create", classmethod(lambda cls, limit, name: None))
        return request.param
    probe = Cgroup.create(2**30, f"torchmemlint-probe-{os.getpid()}")
    if probe is None:
        pytest.skip("no cgroup v2 hierarchy to write in here")
    probe.remove()
    return request.param


def project(tmp_path: Path, body: str, name: str = "train.py") -> Path:
    """A user's folder: the script and neighbours it might touch."""
    folder = tmp_path / "project"
    (folder / "data").mkdir(parents=True, exist_ok=True)
    (folder / "notes.txt").write_text("the user's notes\n")
    (folder / "data" / "keep.csv").write_text("a,b\n1,2\n")
    (folder / name).write_text(NOTE_PID + textwrap.dedent(body))
    return folder / name


def snapshot(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
            for path in sorted(folder.rglob("*"))}


def replay(server, scripts: list[Path], pids: Path, limits: Limits) -> list[VerifyResult]:
    """Verify the finding on the line holding ``MARKER`` in each script (no fix: no twin)."""
    files = []
    for script in scripts:
        source = script.read_text()
        line = next(number for number, text in enumerate(source.splitlines(), 1) if MARKER in text)
        column = source.splitlines()[line - 1].index(MARKER)
        files.append(FileFindings(str(script), source, [Diagnostic(str(script), line, column, "TML001", "kept")]))
    return verify_findings(files, Settings(limits=limits, script_args=(str(pids),)), server=server)


def still_running(pids: Path) -> list[int]:
    """The noted processes that still run (a zombie has ended; its parent just did not reap it)."""
    running = []
    for line in pids.read_text().splitlines():
        pid, start, _ = line.split()
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[19] == start and fields[0] not in ("Z", "X"):
            running.append(int(pid))
    return running


def contained(server, tmp_path: Path, body: str, containment: str,
              limits: Limits = Limits(device="cpu", timeout_s=60)) -> tuple[VerifyResult, list[int]]:
    """Replay ``body``; check that the user's folder is unchanged, that none of the processes
    the script noted runs, and that they ran in the replay's cgroup where there was one; the
    result and the noted pids."""
    script = project(tmp_path, body)
    before = snapshot(script.parent)
    pids = tmp_path / "pids.txt"
    pids.write_text("")
    [result] = replay(server, [script], pids, limits)
    assert snapshot(script.parent) == before
    return result, ended(pids, containment)


def ended(pids: Path, containment: str) -> list[int]:
    """Check that none of the noted processes runs, and that they ran in the replay's cgroup
    where there was one; their pids."""
    noted = [line.split() for line in pids.read_text().splitlines()]
    assert still_running(pids) == []
    assert all(("/torchmemlint-" in cgroup) == (containment == "cgroup") for _, _, cgroup in noted)
    return [int(pid) for pid, _, _ in noted]


def test_forked_children_are_capped_together(replay_server, tmp_path: Path, containment: str) -> None:
    """Three children of 150 MiB each, under a 256 MiB cap: RLIMIT_AS per process lets each
    through; the cap over the tree stops them."""
    result, noted = contained(replay_server, tmp_path, """\
        import time
        kept = []
        for step in range(10):
            kept.append(step)
            if step == 1:
                for child in range(3):
                    if os.fork() == 0:
                        note_pid()
                        ballast = b"x" * (150 * 2**20)  # written, so resident
                        time.sleep(60)
                        os._exit(0)
                time.sleep(60)
        """, containment, Limits(device="cpu", timeout_s=50, memory_limit=256 * MiB))
    assert len(noted) == 3
    assert result.original.status == "oom"
    assert result.original.wall_s < 30  # stopped by the cap, not the timeout
    assert "processes together took more than the 268435456 B cap" in result.original.error
    assert result.verdict == "inconclusive"
    assert "ran out of memory at iteration 2" in result.explanation


def test_detached_processes_are_killed(replay_server, tmp_path: Path, containment: str) -> None:
    """A double-forked daemon in its own session whose parent ended, and an exec'd program in a
    new session with an empty environment: both outlive the script, not the replay."""
    result, noted = contained(replay_server, tmp_path, """\
        import subprocess, time
        kept = []
        for step in range(4):
            kept.append(step)
            if step == 1:
                if os.fork() == 0:
                    os.setsid()
                    if os.fork() == 0:
                        note_pid()
                        time.sleep(300)
                    os._exit(0)
                sleeper = subprocess.Popen(["sleep", "300"], env={}, start_new_session=True)
                note_pid(sleeper.pid)
                time.sleep(1)
        """, containment)
    assert len(noted) == 2
    assert result.original.status == "finished" and result.original.iterations == 4


def test_the_users_files_are_never_touched(replay_server, tmp_path: Path, containment: str) -> None:
    """The script reads its neighbours, then deletes them, overwrites itself and writes beside
    itself: all of it happens in the copy."""
    result, _ = contained(replay_server, tmp_path, """\
        import pathlib, shutil
        here = pathlib.Path(__file__).parent
        assert (here / "notes.txt").read_text() == "the user's notes\\n"
        assert (here / "data" / "keep.csv").exists()
        kept = []
        for step in range(3):
            kept.append(step)
        (here / "notes.txt").unlink()
        shutil.rmtree(here / "data")
        pathlib.Path(__file__).write_text("overwritten")
        pathlib.Path("checkpoint.pt").write_bytes(b"weights")
        """, containment)
    assert result.original.status == "finished", result.original.error
    assert not (tmp_path / "project" / "checkpoint.pt").exists()


def test_input_gets_end_of_file_at_once(replay_server, tmp_path: Path, containment: str) -> None:
    result, _ = contained(replay_server, tmp_path, """\
        kept = []
        for step in range(5):
            kept.append(step)
            if step == 2:
                answer = input("continue? ")
        """, containment)
    assert result.original.status == "error"
    assert result.original.wall_s < 20
    assert "raised EOFError at line" in result.explanation


@pytest.mark.parametrize(("exit_call", "status"), [("sys.exit(3)", "error"), ("sys.exit()", "finished"),
                                                   ("os._exit(3)", "crashed")])
def test_the_exit_status_is_reported(replay_server, tmp_path: Path, containment: str, exit_call: str,
                                     status: str) -> None:
    result, _ = contained(replay_server, tmp_path, f"""\
        kept = []
        for step in range(4):
            kept.append(step)
        {exit_call}
        """, containment)
    assert result.original.status == status
    assert result.original.iterations == 4
    if status == "error":
        assert "the script exited with status 3" in result.explanation
    if status == "crashed":
        assert "exit status 3" in result.explanation


def test_a_replay_that_kills_the_server_costs_only_its_finding(replay_server, tmp_path: Path,
                                                               containment: str) -> None:
    """The first script leaves a detached process behind and kills the replay server; the second
    one is replayed by a new server and gets its verdict."""
    killer = project(tmp_path, """\
        import signal, time
        kept = []
        for step in range(5):
            kept.append(step)
            if step == 2:
                if os.fork() == 0:
                    os.setsid()
                    note_pid()
                    time.sleep(300)
                    os._exit(0)
                time.sleep(0.5)
                os.kill(os.getppid(), signal.SIGKILL)
                time.sleep(60)
        """, "killer.py")
    calm = project(tmp_path, """\
        kept = []
        for step in range(4):
            kept.append(step)
        """, "calm.py")
    before = snapshot(killer.parent)
    pids = tmp_path / "pids.txt"
    pids.write_text("")
    killed, survived = replay(replay_server, [killer, calm], pids, Limits(device="cpu", timeout_s=50))
    assert killed.original.wall_s < 20  # seen at once, not at the timeout
    assert killed.original.status == "crashed"
    assert "the replay server ended during this replay" in killed.original.error
    assert killed.verdict == "inconclusive"
    assert "The original died (the replay server ended during this replay) after iteration 2" in killed.explanation
    assert survived.original.status == "finished" and survived.original.iterations == 4
    assert len(ended(pids, containment)) == 1
    assert snapshot(killer.parent) == before


def test_the_copy_is_bounded_and_leaves_out_environments(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("x = 1\n")
    (tmp_path / "big.bin").write_bytes(b"0" * 5000)
    (tmp_path / "small.txt").write_text("small")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "model.py").write_text("y = 2\n")
    for hidden in (".git", "venv", "__pycache__"):
        (tmp_path / hidden).mkdir()
        (tmp_path / hidden / "file").write_text("z")
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / "linked").symlink_to(tmp_path / "sub")
    plan = FolderCopy.plan(str(tmp_path), 1000, "train.py")
    assert sorted(path for path, _ in plan.files) == ["small.txt", os.path.join("sub", "model.py"), "train.py"]
    assert (plan.skipped_files, plan.skipped_bytes) == (1, 5000)
    plan.copy_to(str(tmp_path / "copy"))
    assert (tmp_path / "copy" / "sub" / "model.py").read_text() == "y = 2\n"

