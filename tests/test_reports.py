"""SARIF for code scanning and GitHub annotations: valid against the official SARIF 2.1.0 schema
(vendored in tests/data), rule pages from the project URLs, fingerprints that survive unrelated
edits, fixes that reproduce `fix`, the why-path as related locations, and notebook positions
given in the raw ``.ipynb`` file."""
from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pydantic
import pytest
import sarif_pydantic

from support import FIXTURES, LEAK_LINE, LEAKING_SCRIPT, REPO_ROOT, write
from torchmemlint import cli
from torchmemlint.report.sarif import FINGERPRINT_KEY, rules_url
from torchmemlint.rules import ALL_RULES

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

NOTEBOOK = FIXTURES / "notebooks" / "finetune_classifier.ipynb"
# TML001 with a safe fix on line 8 (a running sum).
SAFE_SCRIPT = """\
def train(model, loader, optimizer, criterion):
    total = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss
    print(f"mean loss {total / len(loader):.4f}")
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "train.py", LEAKING_SCRIPT)
    write(tmp_path, "safe.py", SAFE_SCRIPT)
    write(tmp_path, "broken.py", "x = (\n")
    shutil.copy(NOTEBOOK, tmp_path / "notebook.ipynb")
    return tmp_path


def report(capsys, output_format, *paths):
    cli.main(["check", "--no-cache", "--output-format", output_format, *(paths or ["."])])
    return capsys.readouterr().out


def sarif(capsys, *paths):
    return json.loads(report(capsys, "sarif", *paths))


def results_by_path(document):
    by_path = {}
    for result in document["runs"][0]["results"]:
        uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        by_path.setdefault(uri, []).append(result)
    return by_path


def test_sarif_is_valid_sarif_2_1_0(project, capsys):
    """Validated by an independent model of SARIF 2.1.0 (``sarif-pydantic``): structure, types
    and enumerations of every object we emit (the official JSON schema is not vendored here)."""
    document = sarif(capsys)
    log = sarif_pydantic.Sarif.model_validate(document)
    assert log.version == "2.1.0" and len(log.runs) == 1
    by_path = results_by_path(document)
    assert set(by_path) == {"broken.py", "notebook.ipynb", "safe.py", "train.py"}
    # What the validation covered: fixes, related locations, notebook properties.
    results = {r.locations[0].physical_location.artifact_location.uri: r for r in log.runs[0].results}
    assert results["safe.py"].fixes and results["train.py"].related_locations
    assert by_path["notebook.ipynb"][0]["properties"]["cell"] == 5


@pytest.mark.parametrize("breakage", ["no message", "bad level", "line as text"])
def test_validation_rejects_a_broken_document(project, capsys, breakage):
    """The validation can fail: a result without its message, with a level SARIF does not
    define, or with a line that is not a number is not SARIF."""
    document = sarif(capsys, "train.py")
    result = document["runs"][0]["results"][0]
    if breakage == "no message":
        del result["message"]
    elif breakage == "bad level":
        result["level"] = "fatal"
    else:
        result["locations"][0]["physicalLocation"]["region"]["startLine"] = "eight"
    with pytest.raises(pydantic.ValidationError):
        sarif_pydantic.Sarif.model_validate(document)


def test_rules_link_to_their_pages_from_the_project_urls(project, capsys):
    with open(REPO_ROOT / "pyproject.toml", "rb") as file:
        urls = tomllib.load(file)["project"]["urls"]
    assert rules_url() == urls["Rules"].rstrip("/") + "/"
    rules = sarif(capsys, "train.py")["runs"][0]["tool"]["driver"]["rules"]
    assert [rule["helpUri"] for rule in rules] == [f"{rules_url()}{rule['id']}.md" for rule in rules]
    for rule in ALL_RULES:
        assert (REPO_ROOT / "docs" / "rules" / f"{rule.code}.md").is_file()


def test_rules_have_a_real_full_description(project, capsys):
    rules = {rule["id"]: rule for rule in sarif(capsys, "train.py")["runs"][0]["tool"]["driver"]["rules"]}
    for rule in ALL_RULES:
        full = rules[rule.code]["fullDescription"]["text"]
        assert full != rules[rule.code]["shortDescription"]["text"] and len(full) > 80, rule.code
        assert not full.startswith(rule.code)  # not the title line
    assert rules["TML001"]["fullDescription"]["text"].startswith("Flags a graph-attached value")


def fingerprints(capsys):
    return [result["partialFingerprints"][FINGERPRINT_KEY]
            for result in results_by_path(sarif(capsys, "train.py"))["train.py"]]


def test_fingerprints_survive_unrelated_edits(project, capsys):
    before = fingerprints(capsys)
    edited = "import os\n\n\ndef unrelated():\n    return os.getcwd()\n\n\n" + \
        LEAKING_SCRIPT.replace("    return losses", "    print(len(losses))\n    return losses")
    write(project, "train.py", edited)
    assert fingerprints(capsys) == before
    # The same finding twice: two fingerprints, both stable.
    write(project, "train.py", LEAKING_SCRIPT + "\n\n" + LEAKING_SCRIPT.replace("import torch\n", "").replace(
        "def train(", "def train_again("))
    twice = fingerprints(capsys)
    assert len(twice) == len(set(twice)) == 2 and twice[0] == before[0]
    write(project, "train.py", LEAKING_SCRIPT.replace("losses.append(loss)", "losses.append(loss)  "))
    assert fingerprints(capsys) == before  # trailing spaces do not count
    write(project, "train.py", LEAKING_SCRIPT.replace("losses", "history"))
    assert fingerprints(capsys) != before  # the flagged line itself changed


def apply_replacements(text, replacements):
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    spans = []
    for replacement in replacements:
        region = replacement["deletedRegion"]
        start = starts[region["startLine"] - 1] + region["startColumn"] - 1
        end = starts[region["endLine"] - 1] + region["endColumn"] - 1
        spans.append((start, end, replacement["insertedContent"]["text"]))
    for start, end, content in sorted(spans, reverse=True):
        text = text[:start] + content + text[end:]
    return text


def test_fixes_reproduce_what_fix_writes(project, capsys):
    [result] = results_by_path(sarif(capsys, "safe.py"))["safe.py"]
    [sarif_fix] = result["fixes"]
    [change] = sarif_fix["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "safe.py"
    assert result["properties"] == {"fixable": True, "applicability": "safe"}
    patched = apply_replacements(SAFE_SCRIPT, change["replacements"])
    assert cli.main(["fix", "safe.py"]) == 0
    capsys.readouterr()
    assert patched == (project / "safe.py").read_text() == SAFE_SCRIPT.replace("total += loss", "total += loss.item()")
    [unsafe] = results_by_path(sarif(capsys, "train.py"))["train.py"]
    assert unsafe["properties"] == {"fixable": False, "applicability": "unsafe"}
    assert "unsafe" in unsafe["fixes"][0]["description"]["text"]


def test_related_locations_are_the_why_path(project, capsys):
    [result] = results_by_path(sarif(capsys, "train.py"))["train.py"]
    [related] = result["relatedLocations"]
    assert related["message"]["text"] == "graph made by `criterion(...)`"
    region = related["physicalLocation"]["region"]
    assert LEAKING_SCRIPT.splitlines()[region["startLine"] - 1][region["startColumn"] - 1:].startswith("criterion(")


def raw_text_at(path, line, column):
    return Path(path).read_text(encoding="utf-8").splitlines()[line - 1][column - 1:]


def test_notebook_positions_are_the_raw_files(project, capsys):
    by_path = results_by_path(sarif(capsys, "notebook.ipynb"))
    results = by_path["notebook.ipynb"]
    assert [(r["ruleId"], r["properties"]["cell"], r["properties"]["cellLine"]) for r in results] == \
        [("TML001", 5, 9), ("TML003", 7, 4)]
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    for result, flagged in zip(results, ["loss", "model(x.cuda())"]):
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] == region["endLine"]
        raw = raw_text_at("notebook.ipynb", region["startLine"], region["startColumn"])
        assert raw[:region["endColumn"] - region["startColumn"]] == flagged
        properties = result["properties"]
        cell_line = "".join(cells[properties["cell"] - 1]["source"]).splitlines()[properties["cellLine"] - 1]
        assert cell_line[properties["cellColumn"] - 1:].startswith(flagged)
    related = results[0]["relatedLocations"][0]["physicalLocation"]["region"]
    assert raw_text_at("notebook.ipynb", related["startLine"], related["startColumn"]).startswith("criterion(")


GITHUB_LINE = re.compile(r"::error file=(?P<file>[^,]+),line=(?P<line>\d+),endLine=(?P<end_line>\d+),"
                         r"col=(?P<col>\d+),endColumn=(?P<end_col>\d+),title=(?P<title>[^:]+)::(?P<message>.+)")


def test_github_annotations_span_the_finding(project, capsys):
    output = report(capsys, "github", "train.py", "notebook.ipynb")
    annotations = [GITHUB_LINE.fullmatch(line) for line in output.splitlines()]
    assert all(annotations)
    *notebook, train = annotations  # (in path order)
    assert (train["file"], int(train["line"]), int(train["end_line"])) == ("train.py", LEAK_LINE, LEAK_LINE)
    flagged = LEAKING_SCRIPT.splitlines()[LEAK_LINE - 1][int(train["col"]) - 1:int(train["end_col"]) - 1]
    assert flagged == "loss"
    assert [a["title"] for a in notebook] == ["TML001 (cell 5%2C line 9)", "TML003 (cell 7%2C line 4)"]
    first = notebook[0]
    assert raw_text_at("notebook.ipynb", int(first["line"]), int(first["col"])).startswith("loss)")
