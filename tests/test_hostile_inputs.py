"""Deep and hostile inputs: one file never stops the run, never crashes the process, and says in
one ``TML000`` line what kept it from being checked — through ``check``, ``fix`` and flake8."""
import ast
import json
import subprocess
import sys

import pytest

from support import LEAKING_SCRIPT, module_env, write
from torchmemlint import cli, engine
from torchmemlint.fix import fix_source
from torchmemlint.flake8_plugin import TorchMemLintChecker
from torchmemlint.rules import ALL_RULES

# A training loop whose last statement holds a finding (TML001) and the deep expression.
LOOP = ("import torch\n\ndef train(model, loader, optimizer, x):\n    losses = []\n    for batch in loader:\n"
        "        optimizer.zero_grad()\n        loss = model(batch)\n        loss.backward()\n"
        "        optimizer.step()\n        losses.append(loss)\n")
CHAINS = {"and": " and x", "or": " or x", "plus": " + x", "comparison": " < x", "subscript": "[0]",
          "attribute_call": ".f()"}


def deep_statement(kind: str, count: int) -> str:
    return LOOP + f"        losses.append(loss{CHAINS[kind] * count})\n"


HOSTILE = {
    # (comparisons stay flat in both trees: 10,000 of them are checked, in seconds, so 3,000 here)
    **{f"{kind}_{count}": deep_statement(kind, count) for kind in CHAINS
       for count in (500, 2_000, 3_000 if kind == "comparison" else 10_000)},
    "parentheses_1000": LOOP + "        losses.append(" + "(" * 1000 + "loss" + ")" * 1000 + ")\n",
    "blocks_150": LOOP + "".join("    " * depth + "if x:\n" for depth in range(150)) + "    " * 150 + "pass\n",
    "blocks_90": LOOP + "".join("    " * depth + "if x:\n" for depth in range(90)) + "    " * 90 + "pass\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_deep_code_is_checked_or_one_clear_error(name):
    source = HOSTILE[name].encode()
    diagnostics, errors = engine.check_source(source, f"{name}.py", ALL_RULES)
    if errors:
        assert len(errors) == 1 and errors[0].code == "TML000"
        assert any(words in errors[0].message for words in ("nested", "syntax error", "indentation"))
    else:
        assert "TML001" in [d.code for d in diagnostics]  # checked: the kept loss is found
    flake8 = list(TorchMemLintChecker(None, f"{name}.py", HOSTILE[name].splitlines(True)).run())
    assert [text.split()[0] for *_, text, _ in flake8] == [e.code for e in errors] + [d.code for d in diagnostics]


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_deep_code_is_fixed_or_left_as_it_was(name):
    source = HOSTILE[name].encode()
    result = fix_source(source, f"{name}.py", ALL_RULES, unsafe=True)
    if result.source != source:
        ast.parse(result.source)
    else:
        assert result.errors or not result.applied


def test_the_nesting_bound_counts_chained_and_as_libcst_nests_it():
    # ``ast`` keeps ``a and b and ...`` as one node: without counting its values, 10,000 of them
    # reached LibCST's native parser, which overflowed the C stack (a segfault, not an error).
    source = deep_statement("and", 2_000).encode()
    module, error = engine.parse(source, "and.py")
    assert module is None and error.line == 11 and f"more than {engine.MAX_NESTING} levels" in error.message
    module, error = engine.parse(deep_statement("and", 500).encode(), "and.py")
    assert module is not None and error is None


def test_one_crash_per_file_does_not_stop_a_run_of_many(tmp_path):
    """Every hostile file in one real run: each gets at most its one line, every ordinary file
    is still checked, nothing crashes (a subprocess: a segfault would show as a negative status)."""
    for name, text in HOSTILE.items():
        write(tmp_path, f"{name}.py", text)
    write(tmp_path, "zz_train.py", LEAKING_SCRIPT)
    write(tmp_path, "deep.ipynb", json.dumps({"cells": [], "metadata": {}}).replace("{}", "[" * 100_000 + "]" * 100_000))
    result = subprocess.run([sys.executable, "-m", "torchmemlint", "check", "--no-cache", "-j", "2", "."],
                            cwd=tmp_path, env=module_env(), capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stdout + result.stderr
    assert "zz_train.py:" in result.stdout and "TML001" in result.stdout
    assert "deep.ipynb:1:1: TML000 not a valid notebook: its JSON is nested too deeply" in result.stdout
    fixed = subprocess.run([sys.executable, "-m", "torchmemlint", "fix", "--unsafe-fixes", "."],
                           cwd=tmp_path, env=module_env(), capture_output=True, text=True, timeout=300)
    assert fixed.returncode == 2 and "Traceback" not in fixed.stderr, fixed.stderr
    assert "losses.append(loss.detach())" in (tmp_path / "zz_train.py").read_text()


def test_deeply_nested_toml_of_our_section_stops_only_its_files(tmp_path, monkeypatch, capsys):
    write(tmp_path, "deep/pyproject.toml", "[tool.torchmemlint]\nx = " + "[" * 100_000 + "]" * 100_000 + "\n")
    write(tmp_path, "deep/train.py", LEAKING_SCRIPT)
    write(tmp_path, "train.py", LEAKING_SCRIPT)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check", "--no-cache", "."]) == 2
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and "deep/train.py:1:1: TML000 not checked:" in out[0] and "nested too deeply" in out[0]
    assert out[1].startswith("train.py:") and "TML001" in out[1]


@pytest.mark.parametrize("corrupt", ["wrong types", "copied from another file", "not an object"])
def test_a_bad_cache_entry_is_a_miss(tmp_path, monkeypatch, capsys, corrupt):
    write(tmp_path, "pyproject.toml", "")
    write(tmp_path, "a_train.py", LEAKING_SCRIPT)
    write(tmp_path, "b_clean.py", "x = 1\n")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check", "-j", "1", "."]) == 1
    first = capsys.readouterr().out
    entries = {json.loads(p.read_bytes())["diagnostics"] != []: p
               for p in (tmp_path / ".torchmemlint_cache").glob("*/*") if not p.name.startswith(".")}
    leaking, clean = entries[True], entries[False]
    if corrupt == "wrong types":
        entry = json.loads(leaking.read_bytes())
        entry["diagnostics"][0][1] = "eleven"  # the line: a string, where the reporters sort numbers
        leaking.write_text(json.dumps(entry))
    elif corrupt == "copied from another file":
        clean.write_bytes(leaking.read_bytes())  # would report a_train.py's finding for b_clean.py
    else:
        leaking.write_text("[]")
    for _ in range(2):  # the miss is checked afresh, and its entry rewritten
        assert cli.main(["check", "-j", "1", "."]) == 1
        assert capsys.readouterr().out == first


def test_flake8_runs_the_plugin_over_deep_files(tmp_path):
    """Through flake8 itself, on the deep files its other plugins survive: pyflakes recurses
    out of stack on 500 chained ``+``, ``[0]`` or ``.f()`` (a failure flake8 reports for pyflakes;
    ``test_deep_code_is_checked_or_one_clear_error`` runs our plugin on those directly)."""
    names = [name for name in HOSTILE if name.split("_")[0] in ("and", "or", "comparison") or name == "blocks_90"]
    for name in names:
        write(tmp_path, f"{name}.py", HOSTILE[name])
    result = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select=TML", "-j", "2", "."],
                            cwd=tmp_path, env=module_env(), capture_output=True, text=True, timeout=300)
    assert "Traceback" not in result.stderr and "failed during" not in result.stderr, result.stderr
    assert result.returncode == 1
    assert {line.split(":")[0][2:] for line in result.stdout.splitlines()} == {f"{name}.py" for name in names}
    assert "./and_10000.py:11:1: TML000 code nested more than 1000 levels deep: not checked" in result.stdout
