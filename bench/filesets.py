"""Which files a benchmark run reads, shared by run.py and the single-tool scripts.

Kept free of third-party imports so that importing it costs the measured scripts nothing.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent

# The packages of the installed torch that issue 6 measures: large, varied, real-world code.
TORCH_SUBPACKAGES = ("nn", "optim", "utils", "ao")


def python_files_under(path: Path) -> list[Path]:
    """A file as given; a folder's ``.py`` files, recursively, in a stable order.

    Hidden folders and ``__pycache__`` are skipped because no linter reads them either.
    """
    if path.is_file():
        return [path]
    found = []
    for candidate in path.rglob("*.py"):
        relative_parts = candidate.relative_to(path).parts[:-1]
        if any(part.startswith(".") or part == "__pycache__" for part in relative_parts):
            continue
        if candidate.is_file():
            found.append(candidate)
    return sorted(found)


def installed_torch_dir() -> Path | None:
    """The installed torch package folder, found without importing torch (that takes seconds)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def default_roots() -> list[Path]:
    """The issue-6 set: four torch subpackages plus the repository's fixtures, when present."""
    roots = []
    torch_dir = installed_torch_dir()
    if torch_dir is not None:
        roots.extend(torch_dir / name for name in TORCH_SUBPACKAGES if (torch_dir / name).is_dir())
    fixtures = REPO_ROOT / "fixtures"
    if fixtures.is_dir():
        roots.append(fixtures)
    return roots


def collect(paths: list[Path]) -> list[Path]:
    """Absolute paths of every Python file under ``paths``, each once, in a stable order."""
    seen = set()
    files = []
    for path in paths:
        for file in python_files_under(path):
            absolute = file.resolve()
            if absolute not in seen:
                seen.add(absolute)
                files.append(absolute)
    return files


def count_lines(data: bytes) -> int:
    """Physical lines, counting a last line without a newline too."""
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def files_from_argv(argv: list[str]) -> list[Path]:
    """For the single-tool scripts: the files named on the command line, folders expanded."""
    if not argv:
        sys.exit(f"usage: python {Path(sys.argv[0]).name} FILE_OR_FOLDER...")
    missing = [arg for arg in argv if not Path(arg).exists()]
    if missing:
        sys.exit(f"no such file or folder: {', '.join(missing)}")
    return collect([Path(arg) for arg in argv])
