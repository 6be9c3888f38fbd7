"""Jupyter notebooks: their code cells are checked as one program, positions are given per cell,
IPython syntax does not break parsing, a bad notebook is one clear error. (``fix`` on
notebooks: test_fix_notebooks.py.)"""
import json

import pytest

from support import FIXTURES, LEAK_LINE, LEAKING_SCRIPT, write
from torchmemlint import cli
from torchmemlint.api import FileTask, check_file
from torchmemlint.notebooks import _python_lines, read_notebook
from torchmemlint.rules import ALL_RULES
from torchmemlint.labels import expected_diagnostics

NOTEBOOK_FIXTURES = sorted(FIXTURES.rglob("*.ipynb"))


def notebook(*cells: str, language: str = "python") -> str:
    """A notebook whose cells are markdown when they start with ``#md``, else code."""
    def cell(text: str) -> dict:
        kind = "markdown" if text.startswith("#md") else "code"
        source = text.splitlines(keepends=True)
        return {"cell_type": kind, "metadata": {}, "source": source,
                **({"execution_count": None, "outputs": []} if kind == "code" else {})}
    return json.dumps({"cells": [cell(text) for text in cells], "nbformat": 4, "nbformat_minor": 5,
                       "metadata": {"language_info": {"name": language}}}, indent=1)


SETUP = "%matplotlib inline\nimport torch\nmodel, loader, opt = torch.nn.Linear(4, 1), [], None\n"
LOOP = """\
losses = []
for x, y in loader:
    !nvidia-smi
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    losses.append(loss)
"""


@pytest.mark.parametrize("path", NOTEBOOK_FIXTURES, ids=lambda p: p.name)
def test_notebook_fixture(path):
    """Each code cell's ``# expect:`` labels, by cell and line in it."""
    document = json.loads(path.read_text(encoding="utf-8"))
    expected = set()
    for number, cell in enumerate(document["cells"], start=1):
        if cell["cell_type"] == "code":
            expected |= {(number, line, code) for line, code in expected_diagnostics("".join(cell["source"]))}
    result = check_file(FileTask(str(path), tuple(rule.code for rule in ALL_RULES), 10 * 1024 * 1024))
    assert not result.errors
    assert {(d.cell, d.line, d.code) for d in result.diagnostics} == expected
    assert expected


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(capsys, *args):
    status = cli.main(["check", "--no-cache", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_finding_is_placed_in_its_cell_past_magics(project, capsys):
    write(project, "train.ipynb", notebook("#md # Training", SETUP, LOOP))
    status, out, _ = check(capsys, ".")
    assert status == 1
    assert out == ("train.ipynb:cell 3:8:19: TML001 graph-attached value kept across iterations; "
                   "store `.item()` or `.detach()` instead\n")


def test_json_gives_the_cell_and_the_fix_without_edits(project, capsys):
    """The edits' positions are those of the joined cells, no file's: ``fix`` applies them."""
    write(project, "train.ipynb", notebook(SETUP, LOOP))
    status, out, _ = check(capsys, "--format", "json", "train.ipynb")
    [finding] = json.loads(out)
    assert (finding["cell"], finding["line"], finding["code"]) == (2, 8, "TML001")
    assert (finding["fix"]["applicability"], finding["fix"]["edits"]) == ("unsafe", [])


def test_python_files_have_no_cell(project, capsys):
    write(project, "train.py", LEAKING_SCRIPT)
    _, out, _ = check(capsys, "--format", "json", "train.py")
    [finding] = json.loads(out)
    assert (finding["cell"], finding["line"]) == (None, LEAK_LINE)


def test_noqa_in_a_cell(project, capsys):
    write(project, "train.ipynb", notebook(SETUP, LOOP.replace("losses.append(loss)",
                                                               "losses.append(loss)  # noqa: TML001")))
    assert check(capsys, "train.ipynb")[0] == 0


def test_syntax_error_names_the_cell(project, capsys):
    write(project, "train.ipynb", notebook(SETUP, "x = 1\ndef broken(:\n    pass\n"))
    status, out, _ = check(capsys, "train.ipynb")
    assert status == 2
    assert out.startswith("train.ipynb:cell 2:2:") and "TML000 syntax error" in out


@pytest.mark.parametrize("content, message", [
    ('{"cells": [', "not a valid notebook (JSON)"),
    ("[1, 2]", "not a valid notebook: no list of cells"),
    (notebook("x <- 1", language="R"), "a R notebook, not Python"),
])
def test_bad_notebook_is_one_error_and_the_run_goes_on(project, capsys, content, message):
    write(project, "a_bad.ipynb", content)
    write(project, "b_train.py", LEAKING_SCRIPT)
    status, out, _ = check(capsys, ".")
    lines = out.splitlines()
    assert status == 2 and len(lines) == 2
    assert lines[0].startswith("a_bad.ipynb:1:1: TML000 " + message)
    assert lines[1].startswith(f"b_train.py:{LEAK_LINE}:")


@pytest.mark.parametrize("cell, python", [
    ("%matplotlib inline\nimport torch", ["pass", "import torch"]),
    ("for x in y:\n    !ls\n    z = 1", ["for x in y:", "    pass", "    z = 1"]),
    ("files = !ls\nmodel?\n??model", ["files = None", "pass", "pass"]),
    ("print('why?')  # really?\na = b % c", ["print('why?')  # really?", "a = b % c"]),
    ("%%bash\necho hi\nls -l", ["", "", ""]),
    ("%%time\nx = 1\ny = 2", ["", "x = 1", "y = 2"]),
    ("! apt-get install -y \\\n    libsndfile1\nx = 1", ["pass", "pass", "x = 1"]),
    ("print('%d'\n      %(i))", ["print('%d'", "      %(i))"]),  # Python as it stands: kept
])
def test_ipython_syntax_keeps_every_line(cell, python):
    assert _python_lines(cell) == python


def test_markdown_cells_are_skipped_and_counted():
    code = read_notebook(notebook("#md intro", "a = 1\nb = 2", "#md more", "c = 3").encode())
    assert code.source == b"a = 1\nb = 2\nc = 3\n"
    assert [code.locate(line) for line in (1, 2, 3)] == [(2, 1), (2, 2), (4, 1)]
