"""The metamorphic cases: every rule fixture under every rewrite that applies to it, what the
rewritten file must be told (the fixture's expected findings, moved with their markers), and
what the linter tells it, run in-process as ``check`` runs it (a notebook through ``api``, as a
file, like any notebook)."""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from importlib.metadata import version
from typing import Optional

from metamorphic.rewrites import REWRITES, REWRITES_BY_NAME, apply, notebook_code
from torchmemlint.api import FileTask, check_file
from torchmemlint.config import DEFAULT_MAX_FILE_SIZE
from torchmemlint.engine import check_source
from torchmemlint.rules import ALL_RULES
from torchmemlint.labels import expected_diagnostics

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "rules"
KNOWN_FAILURES = Path(__file__).resolve().parent / "known_failures.txt"

Location = tuple[Optional[int], int, str]  # (notebook cell or None, line, code)


@dataclass(frozen=True)
class Variant:
    fixture: str  # the fixture's path under fixtures/rules, e.g. "TML001/invalid_plain_function.py"
    rewrite: str
    source: str  # the rewritten file's text

    @property
    def id(self) -> str:
        return f"{self.fixture}::{self.rewrite}"

    @property
    def suffix(self) -> str:
        return REWRITES_BY_NAME[self.rewrite].suffix

    @property
    def invalid(self) -> bool:
        return Path(self.fixture).name.startswith("invalid_")

    def expected(self) -> set[Location]:
        if self.suffix == ".ipynb":
            return {(cell, line, code) for cell, text in notebook_code(self.source)
                    for line, code in expected_diagnostics(text)}
        return {(None, line, code) for line, code in expected_diagnostics(self.source)}

    def findings(self, directory: Path) -> set[Location]:
        """What the linter reports on the rewritten file (every rule, as the fixture test runs
        them); a notebook is written into ``directory`` and checked as a file."""
        path = FIXTURES / self.fixture
        if self.suffix == ".ipynb":
            notebook = directory / (path.stem + ".ipynb")
            notebook.write_text(self.source, encoding="utf-8")
            result = check_file(FileTask(str(notebook), tuple(rule.code for rule in ALL_RULES), DEFAULT_MAX_FILE_SIZE))
            diagnostics, errors = result.diagnostics, result.errors
        else:
            diagnostics, errors = check_source(self.source.encode("utf-8"), str(path), ALL_RULES)
        if errors:
            raise AssertionError(f"{self.id}: the linter could not check the rewritten file: {errors}")
        return {(diagnostic.cell, diagnostic.line, diagnostic.code) for diagnostic in diagnostics}


@lru_cache(maxsize=None)
def variants() -> tuple[Variant, ...]:
    """Every (fixture, rewrite) pair where the rewrite applies, in fixture order.

    Rewriting every fixture takes most of this test's time, so the result is kept in the
    temporary directory under a key made of everything it depends on (the fixtures, the rewrite
    code, the LibCST version): a rerun after a change to the rules rewrites nothing."""
    fixtures = [path for path in sorted(FIXTURES.rglob("*.py")) if path.name.startswith(("invalid_", "valid_"))]
    sources = {path.relative_to(FIXTURES).as_posix(): path.read_text(encoding="utf-8") for path in fixtures}
    key = hashlib.sha256()
    for part in [version("libcst"), *(path.read_text(encoding="utf-8") for path in sorted(Path(__file__).parent.glob("*.py"))),
                 *(f"{name}\0{source}" for name, source in sources.items())]:
        key.update(part.encode("utf-8") + b"\0")
    stored = Path(tempfile.gettempdir()) / "torchmemlint-metamorphic" / f"{key.hexdigest()}.json"
    try:
        return tuple(Variant(*entry) for entry in json.loads(stored.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        pass
    found = []
    for fixture, source in sources.items():  # fixture by fixture: its rewrites share its analysis
        for rewrite in REWRITES:
            rewritten = apply(rewrite, source)
            if rewritten is not None:
                found.append(Variant(fixture, rewrite.name, rewritten))
    try:
        stored.parent.mkdir(parents=True, exist_ok=True)
        partial = stored.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps([[v.fixture, v.rewrite, v.source] for v in found]), encoding="utf-8")
        os.replace(partial, stored)
    except OSError:
        pass  # no cache: the next run rewrites again
    return tuple(found)


_ENTRY = re.compile(r"^(?P<fixture>\S+\.py)\s+(?P<rewrite>\w+)\s*$")


@lru_cache(maxsize=None)
def known_failures() -> dict[str, str]:
    """The known failures, ``fixture::rewrite`` -> the cause they are listed under (the
    ``## cause`` heading above them in ``known_failures.txt``)."""
    entries: dict[str, str] = {}
    cause = "unexplained"
    for number, raw in enumerate(KNOWN_FAILURES.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if line.startswith("##"):
            cause = line.lstrip("#").strip()
            continue
        if not line or line.startswith("#"):
            continue
        match = _ENTRY.match(line)
        if match is None:
            raise ValueError(f"{KNOWN_FAILURES.name}:{number}: expected 'FIXTURE REWRITE', got {raw!r}")
        entries[f"{match['fixture']}::{match['rewrite']}"] = cause
    return entries
