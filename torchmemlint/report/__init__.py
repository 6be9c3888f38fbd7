"""Output formats: concise/full text and github write each file's findings as it is checked;
json and sarif collect them into one document written at the end."""
from __future__ import annotations

from dataclasses import replace
from typing import TextIO

from torchmemlint.report.base import Reporter, ReportOptions
from torchmemlint.report.github import GithubReporter
from torchmemlint.report.json import JsonReporter
from torchmemlint.report.sarif import SarifReporter
from torchmemlint.report.text import TextReporter

REPORTERS: dict[str, type[Reporter]] = {
    "concise": TextReporter,
    "full": TextReporter,  # with the source around each finding
    "text": TextReporter,  # the name before ruff's spelling: concise
    "json": JsonReporter,
    "sarif": SarifReporter,
    "github": GithubReporter,
}
TEXT_FORMATS = ("concise", "full", "text")


def reporter_for(output_format: str, stream: TextIO, options: ReportOptions = ReportOptions()) -> Reporter:
    if output_format == "full":
        options = replace(options, show_source=True)
    return REPORTERS[output_format](stream, options)
