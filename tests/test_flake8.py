"""The flake8 plugin, run by the real flake8 (loaded through the installed entry point)."""
import json
import re
import sys
from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from support import FIXTURES, LEAK_LINE, LEAKING_SCRIPT, REPO_ROOT, run, write
from torchmemlint import __version__, flake8_plugin
from torchmemlint import rules as rules_package
from torchmemlint.rules import ALL_RULES

# (one xdist worker runs this module: its module fixtures are computed once, not once per worker)
pytestmark = pytest.mark.xdist_group("test_flake8")

FIXTURE_FILES = sorted(path.relative_to(REPO_ROOT).as_posix() for path in FIXTURES.rglob("*.py"))
OFF_BY_DEFAULT = [rule.code for rule in ALL_RULES if not rule.default_enabled]
# flake8 option and `torchmemlint check` option for the same selection.
SELECTIONS = {
    "default": (["--select=TML"], []),
    "all-rules": ([f"--select={','.join(['TML', *OFF_BY_DEFAULT])}"],
                  [f"--extend-select={','.join(OFF_BY_DEFAULT)}"] if OFF_BY_DEFAULT else []),
}


def flake8(args, cwd, env):
    return run([sys.executable, "-m", "flake8", "--isolated", "--format=default", *args], cwd, env)


def flake8_findings(output):
    """path -> [(line, column, code, message)] from flake8's default format."""
    findings = {}
    for line in output.splitlines():
        path, row, column, text = line.split(":", 3)
        code, message = text.strip().split(" ", 1)
        findings.setdefault(path, []).append((int(row), int(column), code, message))
    return findings


def check_json_findings(output):
    findings = {}
    for obj in json.loads(output):
        findings.setdefault(obj["path"], []).append((obj["line"], obj["column"], obj["code"], obj["message"]))
    return findings


@pytest.fixture(scope="module", params=list(SELECTIONS))
def both_reports(request, installed_env):
    """One flake8 run and one `torchmemlint check --format json` run over all fixtures."""
    flake8_options, check_options = SELECTIONS[request.param]
    by_flake8 = flake8([*flake8_options, "fixtures"], REPO_ROOT, installed_env)
    assert by_flake8.returncode in (0, 1), by_flake8.stderr
    by_check = run(["torchmemlint", "check", "--format", "json", *check_options, "fixtures"],
                   REPO_ROOT, installed_env)
    assert by_check.returncode in (0, 1), by_check.stderr
    return flake8_findings(by_flake8.stdout), check_json_findings(by_check.stdout)


@pytest.mark.parametrize("fixture", FIXTURE_FILES)
def test_flake8_and_check_agree_on_every_fixture(fixture, both_reports):
    by_flake8, by_check = both_reports
    assert by_flake8.get(fixture, []) == by_check.get(fixture, [])


def test_flake8_prints_the_same_lines_as_check(tmp_path, installed_env):
    write(tmp_path, "proj/train.py", LEAKING_SCRIPT)
    write(tmp_path, "proj/suppressed.py",
          LEAKING_SCRIPT.replace("losses.append(loss)", "losses.append(loss)  # noqa: TML001"))
    write(tmp_path, "proj/other_noqa.py",
          LEAKING_SCRIPT.replace("losses.append(loss)", "losses.append(loss)  # noqa: E501"))
    by_flake8 = flake8(["--select=TML", "proj"], tmp_path, installed_env)
    by_check = run(["torchmemlint", "check", "proj"], tmp_path, installed_env)
    assert by_flake8.returncode == by_check.returncode == 1, by_flake8.stderr
    lines = sorted(by_flake8.stdout.splitlines())
    assert lines == without_fix_marks(by_check.stdout)
    assert [line.split(":")[:2] for line in lines] == [["proj/other_noqa.py", str(LEAK_LINE)],
                                                       ["proj/train.py", str(LEAK_LINE)]]


def without_fix_marks(check_output):
    """`check`'s lines without ruff's ``[*]`` (flake8 knows nothing of fixes)."""
    return [line.replace(" [*] ", " ", 1) for line in check_output.splitlines()]


NOQA_VARIANTS = ["# noqa", "# NOQA", "# noqa: TML001", "# noqa:TML001", "# noqa: TML00",
                 "# noqa: E501,TML001", "# noqa: TML004", "# noqa : TML004", "#noqa: TML001",
                 "#  noqa", "# noqa: E501 because", "# noqa:tml001"]


def test_noqa_means_the_same_under_flake8(tmp_path, installed_env):
    for number, comment in enumerate(NOQA_VARIANTS):
        write(tmp_path, f"proj/variant_{number:02}.py",
              LEAKING_SCRIPT.replace("losses.append(loss)", f"losses.append(loss)  {comment}"))
    by_flake8 = flake8(["--select=TML", "proj"], tmp_path, installed_env)
    by_check = run(["torchmemlint", "check", "proj"], tmp_path, installed_env)
    assert sorted(by_flake8.stdout.splitlines()) == without_fix_marks(by_check.stdout)
    reported = {NOQA_VARIANTS[int(line.split("_")[1][:2])] for line in by_check.stdout.splitlines()}
    assert reported == {"# noqa: TML004", "#noqa: TML001", "#  noqa", "# noqa: E501 because",
                        "# noqa:tml001"}


def test_flake8_plugin_is_registered_with_its_version(tmp_path, installed_env):
    result = run([sys.executable, "-m", "flake8", "--version"], tmp_path, installed_env)
    assert re.search(rf"torchmemlint:\s+{re.escape(__version__)}\b", result.stdout), result.stdout


@dataclass(frozen=True)
class StandInRule:
    code: str
    default_enabled: bool = True


@pytest.mark.parametrize("select, extend_select, enabled", [
    (None, None, ["TML001"]),
    (["TML"], None, ["TML001"]),
    (["TML0", "TML00"], [], ["TML001"]),
    (["TML"], ["TML009"], ["TML001", "TML009"]),
    (["TML009"], None, ["TML001", "TML009"]),
])
def test_off_by_default_rules_only_by_full_code(monkeypatch, select, extend_select, enabled):
    monkeypatch.setattr(rules_package, "ALL_RULES", [StandInRule("TML001"), StandInRule("TML009", False)])
    options = SimpleNamespace(select=select, extend_select=extend_select, ignore=None)
    flake8_plugin.TorchMemLintChecker.parse_options(options)
    assert [rule.code for rule in flake8_plugin.TorchMemLintChecker.rules()] == enabled
    flake8_plugin.TorchMemLintChecker.parse_options(SimpleNamespace(select=None, extend_select=None, ignore=None))


@pytest.mark.parametrize("select, extend_select, ignore, selected", [
    (None, None, None, True),  # flake8's default: every plugin's codes
    (["E", "W"], None, None, False),
    (["E"], ["TML001"], None, True),
    (["T"], None, None, True),
    (["TML004"], None, None, True),
    (None, None, ["TML"], False),
    (None, None, ["TML001"], True),
])
def test_selection_that_leaves_out_tml_skips_the_plugin(select, extend_select, ignore, selected):
    assert flake8_plugin.selects_tml(select, extend_select or (), ignore or ()) is selected


def test_loading_the_plugin_imports_nothing_heavy(tmp_path, installed_env):
    """What flake8 does at start-up, in a fresh interpreter: load the entry point and parse the
    options. Neither the engine, the rules nor LibCST may load."""
    code = ("import sys, types\n"
            "from importlib.metadata import entry_points\n"
            "[entry] = [e for e in entry_points(group='flake8.extension') if e.name == 'TML']\n"
            "checker = entry.load()\n"
            "checker.parse_options(types.SimpleNamespace(select=['E'], extend_select=[], ignore=[]))\n"
            "print(sorted(m for m in sys.modules if m.startswith(('libcst', 'torchmemlint.'))))\n")
    result = run([sys.executable, "-c", code], tmp_path, installed_env)
    assert result.stdout.strip() == "['torchmemlint.flake8_plugin']", result.stderr


@pytest.mark.parametrize("selection", [["--select", "E"], ["--extend-ignore", "TML"]])
def test_flake8_without_tml_selected_never_imports_libcst(selection, tmp_path, installed_env):
    """The real flake8 with TML left out: LibCST and the engine never load (``-X importtime``
    lists every import)."""
    write(tmp_path, "train.py", LEAKING_SCRIPT)
    result = run([sys.executable, "-X", "importtime", "-m", "flake8", "--isolated", "-j", "1",
                  *selection, "train.py"], tmp_path, installed_env)
    assert "TML" not in result.stdout, result.stdout + result.stderr
    imported = [line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if "|" in line]
    heavy = [name for name in imported if name.startswith(("libcst", "torchmemlint.engine", "torchmemlint.rules"))]
    assert imported and not heavy


def test_source_is_reencoded_as_the_file_declares():
    lines = ["# -*- coding: latin-1 -*-\n", "name = 'caf\xe9'\n"]
    checker = flake8_plugin.TorchMemLintChecker(None, "x.py", lines)
    assert checker._source() == "".join(lines).encode("latin-1")
    assert flake8_plugin.TorchMemLintChecker(None, "x.py", ["é = 1\n"])._source() == "é = 1\n".encode()
