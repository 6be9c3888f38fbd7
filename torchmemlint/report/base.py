"""What every output format shares: the reporter interface and the run's counts."""
from __future__ import annotations

import inspect
import sys
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional, TextIO, Union

from torchmemlint.diagnostics import Diagnostic, FileError

if TYPE_CHECKING:
    from torchmemlint.api import FileResult

# The name JSON and SARIF give to FileError (code TML000): a file that could not be checked.
FILE_ERROR_NAME = "file-error"
FILE_ERROR_MESSAGE = "file could not be checked"
# ``torchmemlint explain TML000`` and docs/rules/TML000.md.
FILE_ERROR_DOCS = """\
TML000 file-error.

## What it does
Reports a file that could not be checked at all: it does not exist, cannot be read, is a folder,
contains a NUL byte, is larger than `max-file-size`, is not valid in its encoding (UTF-8 unless a
PEP 263 `# -*- coding: ... -*-` line says otherwise), does not parse, or is a notebook that is not
valid JSON. It is also how `fix` says that it left a file unchanged (a fix would have broken it).
The message says which.

## Why it matters
Nothing in such a file was checked: without this finding a broken or unreadable file would pass
silently. It counts as a finding for the exit status (1).

## How to silence it
Fix the file, or name the code exactly: `--ignore TML000`, `ignore = ["TML000"]` or
`per-file-ignores = { "generated/**" = ["TML000"] }` in `[tool.torchmemlint]`. A prefix (`TML`,
`TML0`) does not turn it off, so that `--ignore TML0` never hides a file that was not checked.
`# noqa` cannot silence it (the file may not even be read).
"""


def finding_name(finding: Union[Diagnostic, FileError]) -> str:
    return finding.name if isinstance(finding, Diagnostic) else FILE_ERROR_NAME


def rule_docs(rule) -> str:
    """A rule's documentation (markdown): its class docstring, else its module's (a rule is one
    module), without the source indentation."""
    rule_class = type(rule)
    docs = rule_class.__doc__ or sys.modules[rule_class.__module__].__doc__ or rule.message
    return inspect.cleandoc(docs)


def is_applicable(finding: Union[Diagnostic, FileError], unsafe_fixes: bool) -> bool:
    """Whether ``torchmemlint fix`` (with ``--unsafe-fixes`` if ``unsafe_fixes``) would fix it."""
    fix = getattr(finding, "fix", None)
    return fix is not None and (fix.safe or unsafe_fixes)


def read_file(path: str) -> Optional[bytes]:
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError:
        return None


@dataclass(frozen=True)
class ReportOptions:
    """How findings are shown, whatever the format."""

    unsafe_fixes: bool = False  # unsafe fixes count as applicable (``[*]``)
    show_source: bool = False  # the source line and a caret under each finding (text)
    color: bool = False  # ANSI colours (text)
    # A file's bytes, for source snippets and notebook positions (stdin's code is not on disk).
    read: Callable[[str], Optional[bytes]] = read_file


class Reporter:
    """Receives each file's result as soon as it is checked, then ``finish`` once."""

    shows_fix_edits = False  # whether the format prints each fix's edits

    def __init__(self, stream: TextIO, options: ReportOptions = ReportOptions()) -> None:
        self.stream = stream
        self.options = options

    def add(self, result: "FileResult") -> None:
        raise NotImplementedError

    def finish(self) -> None:
        """Write what was collected (formats that are one document)."""


class Tally:
    """Counts for the summary line, ``--statistics`` and the exit status: per code, and how many
    findings ``fix`` would fix (``fixable``) or would fix with ``--unsafe-fixes`` only."""

    def __init__(self, unsafe_fixes: bool = False) -> None:
        self.unsafe_fixes = unsafe_fixes
        self.files = 0
        self.by_code: Counter[str] = Counter()
        self.fixable_by_code: Counter[str] = Counter()
        self.unsafe_only = 0
        self.names: dict[str, str] = {}

    def add(self, result: "FileResult") -> None:
        self.files += 1
        for finding in result.findings:
            self.by_code[finding.code] += 1
            self.names.setdefault(finding.code, finding_name(finding))
            if is_applicable(finding, self.unsafe_fixes):
                self.fixable_by_code[finding.code] += 1
            elif is_applicable(finding, True):
                self.unsafe_only += 1

    @property
    def fixable(self) -> int:
        return sum(self.fixable_by_code.values())

    @property
    def total(self) -> int:
        return sum(self.by_code.values())

    @property
    def unchecked(self) -> int:
        """Files, or parts of them, that could not be checked (``TML000``)."""
        return self.by_code[FileError.code]
