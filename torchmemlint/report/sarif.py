"""SARIF 2.1.0, for code-scanning services (GitHub code scanning and others).

Each result carries what code scanning uses: ``helpUri`` on its rule (the rule's page, from the
package's ``Rules`` project URL), ``partialFingerprints`` that survive edits elsewhere in the file
(the rule, the path, the finding's source line without its indentation and which occurrence of
that line it is: no line numbers), ``fixes`` for findings ``fix`` can fix, and
``relatedLocations`` for the places that explain the finding. A notebook's positions are the raw
``.ipynb`` file's lines and columns (what code scanning shows); the cell and the line in it are
kept in the result's properties."""
from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Union
from urllib.parse import quote

from torchmemlint import __version__
from torchmemlint.diagnostics import Diagnostic, FileError
from torchmemlint.report.base import FILE_ERROR_NAME, Reporter, ReportOptions, is_applicable, rule_docs
from torchmemlint.report.source import Positions, SourceLines
from torchmemlint.rules import ALL_RULES

if TYPE_CHECKING:
    from torchmemlint.api import FileResult

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT_KEY = "torchmemlint/v1"
RULES_URL_LABEL = "Rules"  # the project URL (pyproject's [project.urls]) of the rule pages
_FILE_ERROR_DESCRIPTION = ("The file could not be read, decoded or parsed; nothing in it was checked. "
                           "See `torchmemlint explain TML000`.")


@lru_cache(maxsize=None)
def rules_url() -> Optional[str]:
    """The folder URL of the rule pages (``<url>TML001.md``), from the installed metadata."""
    try:
        entries = metadata.metadata("torchmemlint").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    for entry in entries:
        label, _, url = entry.partition(",")
        if label.strip() == RULES_URL_LABEL and url.strip():
            return url.strip().rstrip("/") + "/"
    return None


def _help_uri(code: str) -> dict:
    base = rules_url()
    return {"helpUri": f"{base}{code}.md"} if base else {}


def _what_it_does(docs: str) -> str:
    """The "What it does" section of a rule's docs as one paragraph (else the first paragraph
    after the title line)."""
    match = re.search(r"^## What it does\n(.*?)(?=^## |\Z)", docs, re.MULTILINE | re.DOTALL)
    text = match.group(1) if match else (docs.split("\n\n")[1:2] or [docs])[0]
    return " ".join(text.split())


def _rule_descriptor(rule) -> dict:
    docs = rule_docs(rule)
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.message},
        "fullDescription": {"text": _what_it_does(docs)},
        "help": {"text": docs, "markdown": docs},
        **_help_uri(rule.code),
        "defaultConfiguration": {"level": "error", "enabled": bool(rule.default_enabled)},
    }


def _file_error_descriptor() -> dict:
    return {
        "id": FileError.code,
        "name": FILE_ERROR_NAME,
        "shortDescription": {"text": "The file could not be checked"},
        "fullDescription": {"text": _FILE_ERROR_DESCRIPTION},
        "help": {"text": _FILE_ERROR_DESCRIPTION},
        **_help_uri(FileError.code),
        "defaultConfiguration": {"level": "error"},
    }


def _artifact_uri(path: str) -> dict:
    if os.path.isabs(path):
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(Path(path).as_posix()), "uriBaseId": "%SRCROOT%"}


class SarifReporter(Reporter):
    shows_fix_edits = True  # for the results' ``fixes``

    def __init__(self, stream, options: ReportOptions = ReportOptions()) -> None:
        super().__init__(stream, options)
        self._rules = [_file_error_descriptor(), *(_rule_descriptor(rule) for rule in ALL_RULES)]
        self._rule_index = {rule["id"]: index for index, rule in enumerate(self._rules)}
        self._results: list[dict] = []

    def add(self, result: "FileResult") -> None:
        findings = result.findings
        if not findings:
            return
        raw = self.options.read(result.path)
        positions = Positions(result.path, raw)
        lines = SourceLines(result.path, raw)
        occurrences: Counter[tuple[str, str]] = Counter()
        for finding in findings:
            source_lines = lines.of(finding.cell)
            text = source_lines[finding.line - 1].strip() if 1 <= finding.line <= len(source_lines) else ""
            occurrence = occurrences[finding.code, text]
            occurrences[finding.code, text] += 1
            self._results.append(self._result(finding, positions, _fingerprint(finding, text, occurrence)))

    def _result(self, finding: Union[Diagnostic, FileError], positions: Positions, fingerprint: str) -> dict:
        is_diagnostic = isinstance(finding, Diagnostic)
        region = positions.region(finding.cell, finding.line, finding.column,
                                  finding.end_line if is_diagnostic else 0,
                                  finding.end_column if is_diagnostic else 0)
        artifact = _artifact_uri(finding.path)
        result: dict = {
            "ruleId": finding.code,
            "ruleIndex": self._rule_index[finding.code],
            "level": "error",
            "message": {"text": finding.message},
            "locations": [{"physicalLocation": {"artifactLocation": artifact, "region": region}}],
            "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
        }
        if is_diagnostic and finding.related:
            result["relatedLocations"] = [
                {"id": index, "message": {"text": place.message},
                 "physicalLocation": {"artifactLocation": artifact, "region": positions.region(
                     place.cell, place.line, place.column, place.end_line, place.end_column)}}
                for index, place in enumerate(finding.related, start=1)]
        if is_diagnostic and finding.fix is not None and finding.fix.edits:
            result["fixes"] = [_fix(finding, artifact)]
        properties: dict = {}
        if is_diagnostic and finding.fix is not None:
            properties["fixable"] = is_applicable(finding, self.options.unsafe_fixes)
            properties["applicability"] = "safe" if finding.fix.safe else "unsafe"
        if finding.cell is not None:  # a notebook: where in the cell (the region is the raw file's)
            properties.update(cell=finding.cell, cellLine=finding.line, cellColumn=finding.column + 1)
        if properties:
            result["properties"] = properties
        return result

    def finish(self) -> None:
        document = {
            "$schema": SARIF_SCHEMA,
            "version": "2.1.0",
            "runs": [{
                "tool": {"driver": {
                    "name": "torchmemlint",
                    "version": __version__,
                    "semanticVersion": __version__,
                    **({"informationUri": rules_url()} if rules_url() else {}),
                    "rules": self._rules,
                }},
                "columnKind": "unicodeCodePoints",
                "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri() + "/"}},
                "results": self._results,
            }],
        }
        json.dump(document, self.stream, indent=2, ensure_ascii=False)
        self.stream.write("\n")


def _fingerprint(finding: Union[Diagnostic, FileError], line_text: str, occurrence: int) -> str:
    """Stable under edits elsewhere in the file: no line number, only what the line says."""
    key = "\0".join((finding.code, Path(finding.path).as_posix(), str(finding.cell or ""), line_text,
                     str(occurrence)))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _fix(finding: Diagnostic, artifact: dict) -> dict:
    fix = finding.fix
    unsafe = "" if fix.safe else " (unsafe: may change what the program computes)"
    return {
        "description": {"text": fix.description + unsafe},
        "artifactChanges": [{
            "artifactLocation": artifact,
            "replacements": [{
                "deletedRegion": {"startLine": edit.line, "startColumn": edit.column + 1,
                                  "endLine": edit.end_line, "endColumn": edit.end_column + 1},
                "insertedContent": {"text": edit.content},
            } for edit in fix.edits],
        }],
    }
