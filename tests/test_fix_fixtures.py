"""``fix --unsafe-fixes`` over every invalid fixture: the result compiles, fixing again changes
nothing, ``check`` no longer reports the codes that were fixed, and a fixture whose fix changes
it has its expected ``.fixed`` file (compared byte for byte by test_fixtures.py).

Runnable fixtures (``fixtures/runnable/``) are also run, original and fixed, with torch on the
CPU in a subprocess: the fixed script must print the same loss values."""
from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from torchmemlint.engine import check_source
from torchmemlint.fix import fix_source
from torchmemlint.rules import ALL_RULES

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
EXPECT = re.compile(r"#\s*expect:\s*TML\d{3}")
INVALID_FIXTURES = sorted(p for p in FIXTURES.rglob("*.py") if EXPECT.search(p.read_text(encoding="utf-8")))
RUNNABLE_FIXTURES = sorted((FIXTURES / "runnable").glob("*.py")) if (FIXTURES / "runnable").is_dir() else []
# Numbers standing alone: not the 0 of ``grad_fn=<DivBackward0>``, which only the original prints.
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")


@pytest.mark.parametrize("path", INVALID_FIXTURES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_unsafe_fix_of_every_invalid_fixture(path: Path) -> None:
    source = path.read_bytes()
    result = fix_source(source, str(path), ALL_RULES, unsafe=True)
    assert not result.error
    compile(result.source, str(path), "exec", dont_inherit=True)
    assert fix_source(result.source, str(path), ALL_RULES, unsafe=True).source == result.source
    fixed_codes = {d.code for d in result.applied}
    remaining, _ = check_source(result.source, str(path), ALL_RULES)
    assert not fixed_codes & {d.code for d in remaining}
    if result.source != source:
        assert path.with_name(path.name + ".fixed").is_file(), "a fixable fixture needs its .fixed file"


def _printed_numbers(script: Path, cwd: Path) -> list[float]:
    environment = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONHASHSEED="0")
    completed = subprocess.run([sys.executable, str(script)], cwd=cwd, env=environment,
                               capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-2000:]
    return [float(n) for n in NUMBER.findall(completed.stdout)]


@pytest.mark.parametrize("path", RUNNABLE_FIXTURES, ids=lambda p: p.name)
def test_fixed_runnable_fixture_prints_the_same_losses(path: Path, tmp_path: Path) -> None:
    result = fix_source(path.read_bytes(), str(path), ALL_RULES, unsafe=True)
    assert not result.error
    if result.source == path.read_bytes():
        pytest.skip("nothing to fix")
    fixed = tmp_path / path.name
    fixed.write_bytes(result.source)
    original_numbers = _printed_numbers(path, path.parent)
    fixed_numbers = _printed_numbers(fixed, path.parent)
    assert original_numbers, "the fixture prints no numbers to compare"
    assert len(fixed_numbers) == len(original_numbers)
    # A tensor prints 4 decimals where its .item() prints all; float32 tensor sums and Python
    # float sums differ in the last digits.
    for original, after in zip(original_numbers, fixed_numbers):
        assert math.isclose(original, after, rel_tol=1e-4, abs_tol=1e-4), (original_numbers, fixed_numbers)
