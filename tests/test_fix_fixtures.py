"""``fix --unsafe-fixes`` over every invalid fixture: the result compiles, fixing again changes
nothing, ``check`` no longer reports the codes that were fixed, and a rule fixture whose fix
changes it has its expected ``.fixed`` file (compared byte for byte by test_fixtures.py).

Runnable fixtures (``fixtures/runnable/``) are also run, original and fixed, with torch on the
CPU in one subprocess (torch is imported once): the fixed script must print the same numbers
(loss values, counts)."""
from __future__ import annotations

import json
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
from support import assert_fixed_findings_gone
from torchmemlint.labels import expected_diagnostics

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
INVALID_FIXTURES = sorted(p for p in FIXTURES.rglob("*.py") if expected_diagnostics(p.read_text(encoding="utf-8")))
# ``name.correct.py`` files are hand-written twins of rules that have no automatic fix.
RUNNABLE_FIXTURES = sorted(p for p in (FIXTURES / "runnable").glob("*.py") if not p.name.endswith(".correct.py"))
# Numbers standing alone: not the 0 of ``grad_fn=<DivBackward0>``, which only the original prints.
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")


@pytest.mark.parametrize("path", INVALID_FIXTURES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_unsafe_fix_of_every_invalid_fixture(path: Path) -> None:
    source = path.read_bytes()
    result = fix_source(source, str(path), ALL_RULES, unsafe=True)
    assert not result.error
    compile(result.source, str(path), "exec", dont_inherit=True)
    assert fix_source(result.source, str(path), ALL_RULES, unsafe=True).source == result.source
    remaining, _ = check_source(result.source, str(path), ALL_RULES)
    # Each applied fix removed its finding (others of the same rule may stay, with no fix).
    found, _ = check_source(source, str(path), ALL_RULES)
    assert_fixed_findings_gone(found, result.applied, remaining)
    # Rule fixtures are golden-tested against their .fixed file; runnable ones are run instead.
    # A fixture whose findings are not the expected ones fails test_fixture_diagnostics first.
    if result.source != source and "runnable" not in path.parts and \
            {(d.line, d.code) for d in found} == expected_diagnostics(source.decode("utf-8")):
        assert path.with_name(path.name + ".fixed").is_file(), "a fixable fixture needs its .fixed file"


# Runs each script given as in ``python script.py`` and prints {script: {ok, stdout, error}}.
RUN_SCRIPTS = """
import contextlib, io, json, runpy, sys, traceback
results = {}
for script in sys.argv[1:]:
    stdout = io.StringIO()
    try:
        with contextlib.redirect_stdout(stdout):
            runpy.run_path(script, run_name="__main__")
        results[script] = {"ok": True, "stdout": stdout.getvalue()}
    except BaseException:
        results[script] = {"ok": False, "stdout": stdout.getvalue(), "error": traceback.format_exc()[-2000:]}
sys.stdout.write(json.dumps(results))
"""


@pytest.fixture(scope="module")
def runnable_outputs(tmp_path_factory) -> dict[Path, tuple[dict, dict]]:
    """Each runnable fixture's run and its fixed version's run, all in one child process."""
    fixed_folder = tmp_path_factory.mktemp("fixed")
    pairs = {}
    for path in RUNNABLE_FIXTURES:
        result = fix_source(path.read_bytes(), str(path), ALL_RULES, unsafe=True)
        assert not result.error, path
        if result.source == path.read_bytes():
            continue  # no automatic fix for its rule
        fixed = fixed_folder / path.name
        fixed.write_bytes(result.source)
        pairs[path] = fixed
    scripts = [str(p) for pair in pairs.items() for p in pair]
    environment = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONHASHSEED="0")
    completed = subprocess.run([sys.executable, "-c", RUN_SCRIPTS, *scripts], cwd=FIXTURES / "runnable",
                               env=environment, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-2000:]
    runs = json.loads(completed.stdout)
    return {path: (runs[str(path)], runs[str(fixed)]) for path, fixed in pairs.items()}


@pytest.mark.xdist_group("runnable_outputs")  # (one xdist worker: the module fixture runs once)
@pytest.mark.parametrize("path", RUNNABLE_FIXTURES, ids=lambda p: p.name)
def test_fixed_runnable_fixture_prints_the_same_numbers(path: Path, runnable_outputs) -> None:
    if path not in runnable_outputs:
        pytest.skip("its rule has no automatic fix (the verifier uses the hand-written .correct.py twin)")
    original, fixed = runnable_outputs[path]
    assert fixed["ok"], fixed["error"]
    if not original["ok"]:
        # The antipattern is an error at run time (TML015's in-place update of a leaf that
        # requires grad): the fixed script must run, there is nothing to compare.
        assert "RuntimeError" in original["error"], original["error"]
        return
    original_numbers = [float(n) for n in NUMBER.findall(original["stdout"])]
    fixed_numbers = [float(n) for n in NUMBER.findall(fixed["stdout"])]
    # A script that prints nothing (TML002's, whose fix changes the updates on purpose) must
    # still run once fixed.
    assert len(fixed_numbers) == len(original_numbers), (original["stdout"], fixed["stdout"])
    # A tensor prints 4 decimals where its .item() prints all; float32 tensor sums and Python
    # float sums differ in the last digits.
    for before, after in zip(original_numbers, fixed_numbers):
        assert math.isclose(before, after, rel_tol=1e-4, abs_tol=1e-4), (original["stdout"], fixed["stdout"])
