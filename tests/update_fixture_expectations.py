"""Write the fixtures' expected outputs from what the linter does now, for review with
``git diff``: each labelled fixture's ``NAME.py.expected`` (every diagnostic whole: position,
code, message, its fix's safety class) and, with ``--fixed``, ``NAME.py.fixed`` (what
``fix --unsafe-fixes`` writes; removed where it would change nothing). A notebook fixture's
labels are checked per cell (tests/test_notebooks.py); it gets only its ``NAME.ipynb.fixed``.

    python tests/update_fixture_expectations.py [--fixed] [FIXTURE.py|FIXTURE.ipynb ...]

Without paths, every fixture under fixtures/ that carries ``# expect:`` labels, and every
notebook fixture."""
from __future__ import annotations

import argparse
from pathlib import Path

from torchmemlint.engine import check_source
from torchmemlint.fix import fix_notebook, fix_source
from torchmemlint.rules import ALL_RULES
from torchmemlint.labels import describe, expected_diagnostics

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixed", action="store_true", help="also write the .fixed files")
    parser.add_argument("paths", nargs="*", type=Path)
    args = parser.parse_args()
    paths = args.paths or sorted([*FIXTURES.rglob("*.py"), *FIXTURES.rglob("*.ipynb")])
    for path in paths:
        source = path.read_bytes()
        if path.suffix == ".ipynb":
            if args.fixed:
                _write_fixed(path, source, fix_notebook(source, str(path), ALL_RULES, unsafe=True).source)
            continue
        if not expected_diagnostics(source.decode("utf-8")):
            continue
        diagnostics, _ = check_source(source, str(path), ALL_RULES)
        path.with_name(path.name + ".expected").write_text("".join(describe(d) + "\n" for d in sorted(diagnostics)),
                                                           encoding="utf-8")
        if args.fixed and "runnable" not in path.parts:  # runnable fixtures are run, not compared
            _write_fixed(path, source, fix_source(source, str(path), ALL_RULES, unsafe=True).source)


def _write_fixed(path: Path, source: bytes, fixed_source: bytes) -> None:
    fixed = path.with_name(path.name + ".fixed")
    if fixed_source != source:
        fixed.write_bytes(fixed_source)
    elif fixed.exists():
        fixed.unlink()


if __name__ == "__main__":
    main()
