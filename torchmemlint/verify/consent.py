"""Asking before ``verify`` runs the user's code, and saying what will run.

``verify`` executes the scripts it checks. It says which, with which arguments, in what copy and
under which limits, then asks; ``--yes`` or ``TORCHMEMLINT_VERIFY_YES=1`` answer in advance.
The setting lives in the environment, not in ``pyproject.toml``: a repository's own
configuration must not be able to agree, for the user, to run the repository's code.
"""
from __future__ import annotations

import os
import shlex
from typing import Optional, Sequence, TextIO

from torchmemlint.config import UsageError
from torchmemlint.verify.sandbox import MAX_EXAMINED_ENTRIES, FolderCopy
from torchmemlint.verify.verifier import FileFindings, Settings

YES_VARIABLE = "TORCHMEMLINT_VERIFY_YES"
_BINARY_UNITS = (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))


def describe(files: Sequence[FileFindings], settings: Settings) -> str:
    """What will run: each script with its arguments and findings, the copies, the limits."""
    limits = settings.limits
    arguments = "".join(f" {shlex.quote(argument)}" for argument in settings.script_args)
    lines = [f"torchmemlint verify will run {_count(len(files), 'script')} (the code around each finding, "
             "and a twin with its fix):"]
    for file in files:
        twin = f"; {file.twin_label()}" if file.twin_label() else ""
        lines.append(f"  python {file.path}{arguments}   ({_count(len(file.diagnostics), 'finding')}{twin})")
    for folder in sorted({os.path.dirname(os.path.abspath(file.path)) for file in files}):
        copy = FolderCopy.plan(folder, limits.copy_limit, "")
        left_out = (f"; {_count(copy.skipped_files, 'file')} ({_size(copy.skipped_bytes)}) over the copy limit "
                    "left out" if copy.skipped_files else "")
        if not copy.complete:
            left_out += f"; only its first {MAX_EXAMINED_ENTRIES:,} entries were looked at"
        lines.append(f"  in a temporary copy of {folder} ({_count(len(copy.files), 'file')}, "
                     f"{_size(copy.copied_bytes)}{left_out})")
    lines.append(f"  each replay: at most {limits.timeout_s:g} s and {_size(limits.memory_limit)} for all its "
                 f"processes, device {limits.device}, stdin closed; every process is killed at its end.")
    lines.append("  Files outside the copied folder (absolute paths, your home) and the network are not "
                 "protected: run only code you trust.")
    return "\n".join(lines)


def confirm(files: Sequence[FileFindings], settings: Settings, yes: bool, stdin: Optional[TextIO],
            stderr: TextIO) -> None:
    """Say what will run and ask; raise ``UsageError`` unless the user agrees (or agreed in
    advance with ``yes`` or the environment variable)."""
    stderr.write(describe(files, settings) + "\n")
    if yes or os.environ.get(YES_VARIABLE) == "1":
        return
    if stdin is None or not stdin.isatty():
        raise UsageError(f"verify runs the code it checks and stdin is not a terminal to ask: pass --yes "
                         f"(or set {YES_VARIABLE}=1) to run it")
    stderr.write("Run it? [y/N] ")
    stderr.flush()
    answer = stdin.readline().strip().lower()
    if answer not in ("y", "yes"):
        raise UsageError("nothing was run (not confirmed)")



def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _size(nbytes: int) -> str:
    """In the units that ``--memory-limit`` and ``--copy-limit`` take."""
    for unit, scale in _BINARY_UNITS:
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes} B"
