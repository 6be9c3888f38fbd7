"""Progress of a long ``check`` on a terminal: a real ``torchmemlint check`` whose stderr is a
pseudo-terminal shows ``checked N/M files`` once the run takes more than a second, erases it
before findings and at the end; never on a pipe, with ``-q`` or on a dumb terminal. The line's
timing is tested with a fake clock."""
from __future__ import annotations

import io
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from support import LEAKING_SCRIPT, module_env
from torchmemlint.report.progress import DELAY_S, FileProgress

# (one xdist worker runs this module: its module fixtures are computed once, not once per worker)
pytestmark = pytest.mark.xdist_group("test_progress")

# A file slow enough to check that 32 of them take well over DELAY_S (about 0.08 s each).
SLOW_FILE = "import torch\n" + "".join(
    LEAKING_SCRIPT.replace("import torch\n", "").replace("def train(", f"def train_{i}(") for i in range(40))
FILES = 32
SUMMARY = (f"Found {FILES * 40} errors in {FILES} files checked.\n"
           f"[*] {FILES * 40} fixable with `torchmemlint fix --unsafe-fixes`.\n")
PROGRESS = re.compile(rf"\rchecked \d+/{FILES} files *")
ERASE = re.compile(r"\r +\r")


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("progress")
    for number in range(FILES):
        (root / f"train_{number:02}.py").write_text(SLOW_FILE, encoding="utf-8")
    return root


def run_on_terminal(project: Path, *args: str, **env: str) -> tuple[int, str, str]:
    """``torchmemlint check`` with stderr on a pseudo-terminal (stdout to a file): status,
    stdout, and what the terminal received."""
    controller, terminal = pty.openpty()
    with open(project / "stdout.txt", "w+b") as stdout:
        process = subprocess.Popen(
            [sys.executable, "-m", "torchmemlint", "check", "--no-cache", "-j", "1", *args, "."],
            cwd=project, stdin=subprocess.DEVNULL, stdout=stdout, stderr=terminal,
            env={**module_env(), "TERM": "xterm", **env})
        os.close(terminal)
        received = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # (Linux: EIO once the child has closed the terminal)
                break
            if not chunk:
                break
            received += chunk
        os.close(controller)
        status = process.wait(timeout=120)
        stdout.seek(0)
        out = stdout.read().decode()
    (project / "stdout.txt").unlink()
    return status, out, received.decode().replace("\r\n", "\n")


def test_progress_is_shown_then_erased_on_a_terminal(project):
    status, out, terminal = run_on_terminal(project)
    assert status == 1
    shown = PROGRESS.findall(terminal)
    assert shown, terminal[:500]
    # Counts go up; the last line left on the terminal is the summary, the progress erased.
    counts = [int(re.search(r"(\d+)/", line).group(1)) for line in shown]
    assert counts == sorted(counts) and counts[-1] < FILES
    assert ERASE.sub("", PROGRESS.sub("", terminal)) == SUMMARY
    assert out.count("TML001") == FILES * 40 and "checked" not in out


def test_json_output_stays_one_document(project):
    status, out, terminal = run_on_terminal(project, "--output-format", "json")
    assert status == 1 and PROGRESS.search(terminal)
    assert len(json.loads(out)) == FILES * 40


@pytest.mark.parametrize("args, env", [(("-q",), {}), ((), {"TERM": "dumb"})], ids=["quiet", "dumb-terminal"])
def test_no_progress_when_asked_for_quiet_or_on_a_dumb_terminal(project, args, env):
    status, _, terminal = run_on_terminal(project, *args, **env)
    assert status == 1
    assert terminal == ("" if "-q" in args else SUMMARY)  # no progress line, nothing erased


def test_no_progress_on_a_pipe(project):
    completed = subprocess.run([sys.executable, "-m", "torchmemlint", "check", "--no-cache", "-j", "1", "."],
                               cwd=project, capture_output=True, text=True, env=module_env(), timeout=120)
    assert completed.returncode == 1
    assert completed.stderr == SUMMARY


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_nothing_is_drawn_before_the_delay_and_the_line_is_erased():
    clock, stream = FakeClock(), Terminal()
    progress = FileProgress(stream, 3, enabled=True, clock=clock)
    progress.advance()
    assert stream.getvalue() == ""  # a short run shows nothing
    clock.now = DELAY_S + 0.01
    progress.advance()
    assert stream.getvalue() == "\rchecked 2/3 files"
    progress.erase()
    assert stream.getvalue().endswith("\r" + " " * len("checked 2/3 files") + "\r")
    progress.redraw()  # after a finding: back below it
    assert stream.getvalue().endswith("\rchecked 2/3 files")
    progress.advance()  # the last file: the line is not drawn again, only erased at the end
    progress.erase()
    assert stream.getvalue().endswith("\r" + " " * 17 + "\r")


def test_disabled_progress_writes_nothing():
    clock, stream = FakeClock(), Terminal()
    progress = FileProgress(stream, 3, enabled=False, clock=clock)
    clock.now = 10.0
    progress.advance()
    progress.redraw()
    progress.erase()
    assert stream.getvalue() == ""
