"""Output formats: text and github write each file's findings as it is checked; json and sarif
collect them into one document written at the end."""
from __future__ import annotations

from typing import TextIO

from torchmemlint.report.base import Reporter
from torchmemlint.report.github import GithubReporter
from torchmemlint.report.json import JsonReporter
from torchmemlint.report.sarif import SarifReporter
from torchmemlint.report.text import TextReporter

REPORTERS: dict[str, type[Reporter]] = {
    "text": TextReporter,
    "json": JsonReporter,
    "sarif": SarifReporter,
    "github": GithubReporter,
}


def reporter_for(output_format: str, stream: TextIO) -> Reporter:
    return REPORTERS[output_format](stream)
