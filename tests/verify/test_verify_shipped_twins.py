"""``verify`` uses a script's shipped hand-written twin, ``NAME.correct.py`` next to
``NAME.py`` (as fixtures/runnable/ lays them out), as the twin of its findings, says so, and
never replays the twin as a script of its own when its original is in the same run."""
from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from test_verify_cli import run_cli
from torchmemlint.config import UsageError
from torchmemlint.diagnostics import Diagnostic
from torchmemlint.verify.consent import describe
from torchmemlint.verify.output import write_table
from torchmemlint.verify.verifier import Settings, VerifyResult, verify_paths

RUNNABLE = Path(__file__).resolve().parents[2] / "fixtures" / "runnable"
CACHED = "tml012_cached_tensor_function"  # TML012: no automatic fix, a shipped twin
KEEPS_LOSS = "tml001_train_keeps_loss"  # TML001: its own fix, no shipped twin
# What a twin replayed as an original would report (an evaluation without no_grad: TML003).
EVALUATION = "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.eval()\nouts = []\nloader = [torch.ones(2)]\n" \
             "for x in loader:\n    outs.append(model(x))\n"


class Stop(Exception):
    """Raised by the consent step: what would run is known, nothing has run."""


def planned(*paths: Path, **options) -> list:
    seen = []

    def confirm(files):
        seen.extend(files)
        raise Stop

    with pytest.raises(Stop):
        verify_paths([str(p) for p in paths], Settings(), confirm=confirm, **options)
    return seen


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for name in (f"{CACHED}.py", f"{CACHED}.correct.py", f"{KEEPS_LOSS}.py"):
        shutil.copyfile(RUNNABLE / name, tmp_path / name)
    return tmp_path


def test_a_folder_pairs_each_script_with_its_shipped_twin(folder: Path) -> None:
    # A twin with a finding of its own, to tell if it were replayed as a script.
    (folder / f"{CACHED}.correct.py").write_text(
        (RUNNABLE / f"{CACHED}.correct.py").read_text(encoding="utf-8") + EVALUATION, encoding="utf-8")
    files = planned(folder)
    assert [Path(f.path).name for f in files] == [f"{KEEPS_LOSS}.py", f"{CACHED}.py"]
    keeps_loss, cached = files
    assert (keeps_loss.twin_label(), keeps_loss.twin_of(keeps_loss.diagnostics[0])[1]) == ("", "fix")
    twin = str(folder / f"{CACHED}.correct.py")
    assert cached.twin_label() == f"twin: {twin} (shipped)"
    assert cached.twin_of(cached.diagnostics[0]) == (cached.twin_text, "shipped")
    assert f"python {cached.path}   (1 finding; twin: {twin} (shipped))" in describe(files, Settings())


def test_a_single_file_finds_its_shipped_twin(folder: Path) -> None:
    [cached] = planned(folder / f"{CACHED}.py")
    assert cached.shipped and cached.twin_path == str(folder / f"{CACHED}.correct.py")


def test_a_twin_without_its_original_is_a_script_like_any_other(folder: Path) -> None:
    (folder / "evaluate.correct.py").write_text(EVALUATION, encoding="utf-8")
    [evaluation] = planned(folder / "evaluate.correct.py")
    assert [d.code for d in evaluation.diagnostics] == ["TML001", "TML003"] and evaluation.twin_label() == ""


def test_a_twin_given_with_the_option_wins_over_the_shipped_one(folder: Path) -> None:
    given = folder / "mine.py"
    shutil.copyfile(folder / f"{CACHED}.correct.py", given)
    [cached] = planned(folder / f"{CACHED}.py", twin=str(given))
    assert cached.twin_label() == f"twin: {given} (--twin)"
    assert cached.twin_of(cached.diagnostics[0])[1] == "file"


def test_a_shipped_twin_that_does_not_parse_is_named(folder: Path) -> None:
    (folder / f"{CACHED}.correct.py").write_text("def broken(:\n", encoding="utf-8")
    with pytest.raises(UsageError, match=rf"{CACHED}.correct.py: syntax error"):
        planned(folder / f"{CACHED}.py")


def test_the_table_names_the_shipped_twin() -> None:
    result = VerifyResult(Diagnostic("a.py", 3, 0, "TML012", "cache"), "not-reproduced", "Nothing kept.",
                          twin_origin="shipped", twin_path="a.correct.py")
    stream = io.StringIO()
    write_table([result], stream)
    assert "    Nothing kept.\n    twin: a.correct.py (shipped)\n" in stream.getvalue()


@pytest.mark.slow
def test_verify_a_folder_replays_against_the_shipped_twin(folder: Path) -> None:
    (folder / f"{KEEPS_LOSS}.py").unlink()
    completed = run_cli("verify", str(folder), "--yes", "--device", "cpu", "--warmup", "1", "--iterations", "2",
                        "--format", "json")
    assert completed.returncode == 1, completed.stderr  # confirmed
    twin = str(folder / f"{CACHED}.correct.py")
    assert f"(1 finding; twin: {twin} (shipped))" in completed.stderr  # what will run, before it runs
    assert "1 script" in completed.stderr
    [finding] = json.loads(completed.stdout)
    assert (finding["code"], finding["verdict"]) == ("TML012", "confirmed-growth")
    assert (finding["twin_origin"], finding["twin_path"]) == ("shipped", twin)
    assert finding["twin"]["iterations"] == 1 + 2
