"""``fix`` on Jupyter notebooks: each notebook fixture's ``NAME.ipynb.fixed`` is what ``fix
--unsafe-fixes`` writes (``python tests/update_fixture_expectations.py --fixed`` rewrites it,
for review with ``git diff``). Only the changed cells' sources differ, magics and everything
else of the file stay byte for byte, nbformat reads the result as a valid notebook, and the
safety net skips what cannot go back into the cells."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import nbformat
import pytest

from support import FIXTURES, assert_fixed_findings_gone, write
from torchmemlint import cli
from torchmemlint.api import FileTask, check_bytes
from torchmemlint.fix import fix_notebook
from torchmemlint.notebooks import EditableCells, _cell_sources, read_notebook
from torchmemlint.rules import ALL_RULES

FIXED_NOTEBOOKS = sorted(FIXTURES.rglob("*.ipynb.fixed"))
ALL_CODES = tuple(rule.code for rule in ALL_RULES)


def check(path: Path, source: bytes):
    return check_bytes(FileTask(str(path), ALL_CODES, 10 * 1024 * 1024), source)


@pytest.mark.parametrize("fixed", FIXED_NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_fixture_fix(fixed: Path) -> None:
    original = fixed.with_suffix("")
    source = original.read_bytes()
    result = fix_notebook(source, str(original), ALL_RULES, unsafe=True)
    assert not result.errors
    assert result.source == fixed.read_bytes()
    assert fix_notebook(result.source, str(original), ALL_RULES, unsafe=True).source == result.source, \
        "fixing is not idempotent"
    # Each applied fix removed its finding; the positions are cells and lines, as check gives them.
    found, remaining = check(original, source), check(original, result.source)
    assert not remaining.errors
    assert_fixed_findings_gone(found.diagnostics, result.applied, remaining.diagnostics)
    assert {(d.cell, d.line, d.code) for d in result.remaining} == \
        {(d.cell, d.line, d.code) for d in remaining.diagnostics}
    # nbformat reads it back as a valid notebook; only code cells' sources changed.
    nbformat.validate(nbformat.reads(result.source.decode("utf-8"), as_version=nbformat.NO_CONVERT))
    before, after = json.loads(source), json.loads(result.source)
    assert {k: v for k, v in before.items() if k != "cells"} == {k: v for k, v in after.items() if k != "cells"}
    assert len(before["cells"]) == len(after["cells"])
    for old, new in zip(before["cells"], after["cells"]):
        assert {k: v for k, v in old.items() if k != "source"} == {k: v for k, v in new.items() if k != "source"}
        assert old["source"] == new["source"] or old["cell_type"] == "code"


def without_sources(text: str, cells: list[int]) -> str:
    """``text`` with the source values of these cells (0-based) cut out."""
    sources = _cell_sources(text)
    for index in sorted(cells, reverse=True):
        start, end = sources[index].span
        text = text[:start] + text[end:]
    return text


@pytest.mark.parametrize("fixed", FIXED_NOTEBOOKS, ids=lambda p: p.name)
def test_changed_bytes_are_only_in_the_changed_cells_sources(fixed: Path) -> None:
    """Outside the sources of the cells that changed, the file is the same text: indentation,
    escapes, key order, the end of the file."""
    before, after = fixed.with_suffix("").read_text(encoding="utf-8"), fixed.read_text(encoding="utf-8")
    changed = [index for index, (old, new) in enumerate(zip(json.loads(before)["cells"], json.loads(after)["cells"]))
               if old["source"] != new["source"]]
    assert changed
    assert without_sources(before, changed) == without_sources(after, changed)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def fix(capsys, *args):
    status = cli.main(["fix", "--no-cache", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_fix_writes_the_fixed_notebook_keeping_its_mode(project, capsys):
    path = project / "magics.ipynb"
    shutil.copyfile(FIXTURES / "notebooks" / "magics_kept.ipynb", path)
    os.chmod(path, 0o640)
    status, out, err = fix(capsys, "--unsafe-fixes", "magics.ipynb")
    assert (status, out) == (0, "")
    assert "Fixed 2 errors in 1 file; 0 remaining." in err
    assert path.read_bytes() == (FIXTURES / "notebooks" / "magics_kept.ipynb.fixed").read_bytes()
    assert os.stat(path).st_mode & 0o777 == 0o640
    assert [p.name for p in project.iterdir()] == ["magics.ipynb"]  # no temporary file left


def test_safe_fixes_only_without_unsafe_fixes(project, capsys):
    path = project / "magics.ipynb"
    shutil.copyfile(FIXTURES / "notebooks" / "magics_kept.ipynb", path)
    assert cli.main(["check", "--no-cache", "magics.ipynb"]) == 1
    assert "magics.ipynb:cell 8:6:14: TML003 [*] " in capsys.readouterr().out
    status, out, _ = fix(capsys, "magics.ipynb")
    assert status == 1
    assert out.startswith("magics.ipynb:cell 6:8:19: TML001 ")  # unsafe: left for --unsafe-fixes
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    assert cells[7]["source"][2] == "with torch.no_grad():\n"  # the safe TML003 fix
    assert "    losses.append(loss)  # expect: TML001\n" in cells[5]["source"]


def test_notebook_without_fix_to_apply_stays_byte_identical(project, capsys):
    """A notebook with nothing to fix is not rewritten, whatever its layout (CRLF line breaks
    here)."""
    raw = (FIXTURES / "notebooks" / "magics_kept.ipynb").read_bytes().replace(b"\n", b"\r\n")
    path = write(project, "train.ipynb", raw)
    status, out, _ = fix(capsys, "--select", "TML001", "train.ipynb")
    assert status == 1 and "TML001" in out
    assert path.read_bytes() == raw


def test_diff_shows_each_changed_cell_and_writes_nothing(project, capsys):
    path = project / "magics.ipynb"
    shutil.copyfile(FIXTURES / "notebooks" / "magics_kept.ipynb", path)
    before = path.read_bytes()
    status, out, _ = fix(capsys, "--diff", "--unsafe-fixes", "magics.ipynb")
    assert status == 1
    assert path.read_bytes() == before
    assert out.count("--- magics.ipynb:cell 6\n+++ magics.ipynb:cell 6\n") == 1
    assert "--- magics.ipynb:cell 8\n+++ magics.ipynb:cell 8\n@@ -1,8 +1,9 @@\n" in out
    assert "-    !nvidia-smi --query-gpu=memory.used --format=csv\n" \
           "-    %time pred = model(x)\n" in out
    assert "+with torch.no_grad():\n+    for x, y in loader:\n" \
           "+        !nvidia-smi --query-gpu=memory.used --format=csv\n" in out
    assert "# magics.ipynb:cell 8:6:14: TML003 " in out and "#   fixed (safe): " in out
    assert "No newline" not in out


def notebook(*cells: str, indent: int = 1) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                                  "source": text.splitlines(keepends=True)} for text in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=indent) + "\n"


def test_fix_that_would_move_code_across_cells_is_skipped(project, capsys):
    """TML014's fix wraps the rest of the block in ``with``: at a cell's top level that is the
    next cells too, which cannot go back into them."""
    raw = notebook("import torch\nmodel = torch.nn.Linear(2, 2)\nloader = []\ntorch.no_grad()\n",
                   "for x in loader:\n    y = model(x)\n")
    path = write(project, "eval.ipynb", raw)
    status, out, _ = fix(capsys, "--unsafe-fixes", "eval.ipynb")
    assert status == 2
    assert "eval.ipynb:cell 1:4:1: TML000 TML014 fix skipped: unsafe edit (it moves code across the " \
           "notebook's cells)" in out
    assert path.read_text(encoding="utf-8") == raw


def test_magic_lines_are_reindented_with_their_block(project, capsys):
    raw = notebook("import torch\nmodel = torch.nn.Linear(2, 2)\nloader = []",
                   "model.eval()\nout = []\nfor x in loader:\n    %time y = model(x)\n    files = !ls \\\n"
                   "        -l\n    out.append(model(x).argmax().item())\n")
    path = write(project, "eval.ipynb", raw)
    assert fix(capsys, "eval.ipynb")[0] == 0
    assert "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][1]["source"]) == (
        "model.eval()\nout = []\nwith torch.no_grad():\n    for x in loader:\n        %time y = model(x)\n"
        "        files = !ls \\\n            -l\n        out.append(model(x).argmax().item())\n")


def test_fix_from_stdin_prints_the_fixed_notebook(project, capsys, monkeypatch):
    raw = (FIXTURES / "notebooks" / "compact_one_line.ipynb").read_bytes()
    monkeypatch.setattr(cli, "_read_stdin", lambda: raw)
    status = cli.main(["fix", "--no-cache", "--stdin-filename", "eval.ipynb", "-"])
    assert status == 0
    assert capsys.readouterr().out.encode() == (FIXTURES / "notebooks" / "compact_one_line.ipynb.fixed").read_bytes()


def test_an_empty_source_list_gets_the_files_indentation():
    raw = notebook("x = 1", "", indent=2).encode()
    assert b'"source": []' in raw
    cells = EditableCells.read(raw, read_notebook(raw))
    written = cells.write({2: "import torch\ny = 2"}).decode()
    assert '\n      "source": [\n        "import torch\\n",\n        "y = 2"\n      ]\n' in written
    assert json.loads(written)["cells"][1]["source"] == ["import torch\n", "y = 2"]


def test_ascii_escapes_are_kept_where_the_file_uses_them():
    raw = json.dumps(json.loads(notebook("s = 'é'\nt = 1")), indent=1, ensure_ascii=True).encode()
    cells = EditableCells.read(raw, read_notebook(raw))
    assert b'"t = 2 # \\u00e9"' in cells.write({1: "s = 'é'\nt = 2 # é"})


def test_a_byte_order_mark_is_kept(project, capsys):
    raw = (FIXTURES / "notebooks" / "compact_one_line.ipynb").read_bytes()
    path = write(project, "eval.ipynb", b"\xef\xbb\xbf" + raw)
    assert fix(capsys, "eval.ipynb")[0] == 0
    assert path.read_bytes() == b"\xef\xbb\xbf" + (FIXTURES / "notebooks" / "compact_one_line.ipynb.fixed").read_bytes()


def test_a_notebook_that_cannot_be_rewritten_in_place_is_reported_and_left(project, capsys):
    """JSON readers keep the last of two ``cells`` keys; where the cells lie is then unclear."""
    document = json.loads((FIXTURES / "notebooks" / "compact_one_line.ipynb").read_text(encoding="utf-8"))
    raw = '{"cells": [{"cell_type": "raw", "metadata": {}, "source": "x"}], ' + json.dumps(document)[1:]
    path = write(project, "eval.ipynb", raw)
    status, out, _ = fix(capsys, "eval.ipynb")
    assert status == 2
    assert out.splitlines() == [
        "eval.ipynb:1:1: TML000 not fixed: its JSON cannot be rewritten in place (a repeated key, or a code "
        "cell without a source)",
        "eval.ipynb:cell 2:4:17: TML003 [*] forward pass in evaluation code without torch.no_grad()/"
        "inference_mode(); activations are kept for a backward that never comes"]
    assert path.read_text(encoding="utf-8") == raw
