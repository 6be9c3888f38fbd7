"""What every output format shares: the reporter interface and the run's counts."""
from __future__ import annotations

import inspect
import sys
from collections import Counter
from typing import TYPE_CHECKING, TextIO, Union

from torchmemlint.diagnostics import Diagnostic, FileError

if TYPE_CHECKING:
    from torchmemlint.api import FileResult

# The name JSON and SARIF give to FileError (code TML000): a file that could not be checked.
FILE_ERROR_NAME = "file-error"


def finding_name(finding: Union[Diagnostic, FileError]) -> str:
    return finding.name if isinstance(finding, Diagnostic) else FILE_ERROR_NAME


def rule_docs(rule) -> str:
    """A rule's documentation (markdown): its class docstring, else its module's (a rule is one
    module), without the source indentation."""
    rule_class = type(rule)
    docs = rule_class.__doc__ or sys.modules[rule_class.__module__].__doc__ or rule.message
    return inspect.cleandoc(docs)


class Reporter:
    """Receives each file's result as soon as it is checked, then ``finish`` once."""

    shows_fix_edits = False  # whether the format prints each fix's edits

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def add(self, result: "FileResult") -> None:
        raise NotImplementedError

    def finish(self) -> None:
        """Write what was collected (formats that are one document)."""


class Tally:
    """Counts for the summary line, ``--statistics`` and the exit status."""

    def __init__(self) -> None:
        self.files = 0
        self.by_code: Counter[str] = Counter()
        self.names: dict[str, str] = {}

    def add(self, result: "FileResult") -> None:
        self.files += 1
        for finding in result.findings:
            self.by_code[finding.code] += 1
            self.names.setdefault(finding.code, finding_name(finding))

    @property
    def total(self) -> int:
        return sum(self.by_code.values())

    @property
    def unchecked(self) -> int:
        """Files, or parts of them, that could not be checked (``TML000``)."""
        return self.by_code[FileError.code]
