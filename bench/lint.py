"""What the bench scripts share: finding Python files, reading ``# expect:`` labels, and running
every rule of the catalogue (off-by-default ones included) over one file.

torchmemlint is imported from this checkout when first needed, so the scripts run without the
package installed."""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Iterator

REPO_ROOT = Path(__file__).resolve().parent.parent
RULE_DIR = re.compile(r"^TML\d{3}$")


def python_files(root: Path) -> Iterator[Path]:
    """Every ``.py`` file under ``root`` (or ``root`` itself), in a stable order."""
    if root.is_file():
        yield root
        return
    yield from sorted(p for p in root.rglob("*.py") if p.is_file())


def expected_diagnostics(source: str) -> set[tuple[int, str]]:
    """The (line, code) pairs a labelled file expects (the rule fixtures' label syntax)."""
    _make_importable()
    from torchmemlint.labels import expected_diagnostics as expected

    return expected(source)


def rule_of_directory(path: Path) -> str | None:
    """The code of the nearest enclosing ``TMLxxx`` folder: the rule a file was written for."""
    for parent in path.parents:
        if RULE_DIR.match(parent.name):
            return parent.name
    return None


def all_rules():
    """Every rule of the catalogue, including the ones off by default."""
    _make_importable()
    from torchmemlint.rules import ALL_RULES

    return list(ALL_RULES)


def lint(source: bytes, path: Path, rules, fix_edits: bool = True) -> tuple[list, list]:
    """Diagnostics and file errors of ``rules`` on one file (``# noqa`` honoured as in a real run);
    ``fix_edits=False`` as the text output asks (fixes without their edits)."""
    _make_importable()
    from torchmemlint.engine import check_source

    return check_source(source, str(path), rules, fix_edits=fix_edits)


def _make_importable() -> None:
    # The scripts are run as ``python bench/x.py`` from a checkout that need not be installed.
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
