"""SARIF 2.1.0, for code-scanning services (GitHub code scanning and others)."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Union
from urllib.parse import quote

from torchmemlint import __version__
from torchmemlint.diagnostics import Diagnostic, FileError
from torchmemlint.report.base import FILE_ERROR_NAME, Reporter, rule_docs
from torchmemlint.rules import ALL_RULES

if TYPE_CHECKING:
    from torchmemlint.api import FileResult

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_FILE_ERROR_RULE = {
    "id": FileError.code,
    "name": FILE_ERROR_NAME,
    "shortDescription": {"text": "The file could not be checked"},
    "help": {"text": "The file could not be read, decoded or parsed; nothing in it was checked."},
    "defaultConfiguration": {"level": "error"},
}


def _rule_descriptor(rule) -> dict:
    docs = rule_docs(rule)
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.message},
        "fullDescription": {"text": docs.split("\n\n", 1)[0]},
        "help": {"text": docs, "markdown": docs},
        "defaultConfiguration": {"level": "error", "enabled": bool(rule.default_enabled)},
    }


def _artifact_uri(path: str) -> dict:
    if os.path.isabs(path):
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(Path(path).as_posix()), "uriBaseId": "%SRCROOT%"}


class SarifReporter(Reporter):
    def __init__(self, stream) -> None:
        super().__init__(stream)
        self._rules = [_FILE_ERROR_RULE, *(_rule_descriptor(rule) for rule in ALL_RULES)]
        self._rule_index = {rule["id"]: index for index, rule in enumerate(self._rules)}
        self._results: list[dict] = []

    def add(self, result: "FileResult") -> None:
        self._results.extend(self._result(finding) for finding in result.findings)

    def _result(self, finding: Union[Diagnostic, FileError]) -> dict:
        region = {"startLine": finding.line, "startColumn": finding.column + 1}
        if isinstance(finding, Diagnostic) and finding.end_line:
            region.update(endLine=finding.end_line, endColumn=finding.end_column + 1)
        result = {
            "ruleId": finding.code,
            "ruleIndex": self._rule_index[finding.code],
            "level": "error",
            "message": {"text": finding.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": _artifact_uri(finding.path),
                "region": region,
            }}],
        }
        if finding.cell is not None:  # a notebook: lines count within the cell
            result["properties"] = {"cell": finding.cell}
        return result

    def finish(self) -> None:
        document = {
            "$schema": SARIF_SCHEMA,
            "version": "2.1.0",
            "runs": [{
                "tool": {"driver": {
                    "name": "torchmemlint",
                    "version": __version__,
                    "rules": self._rules,
                }},
                "columnKind": "unicodeCodePoints",
                "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri() + "/"}},
                "results": self._results,
            }],
        }
        json.dump(document, self.stream, indent=2, ensure_ascii=False)
        self.stream.write("\n")
