"""The command line, in process (``cli.main``) and as users run it (``python -m torchmemlint``)."""
import json
import os
import re
import sys

import pytest

from support import FIXED_SCRIPT, LEAK_LINE, LEAKING_SCRIPT, module_env, run, write
from torchmemlint import cli, engine
from torchmemlint.api import plan
from torchmemlint.report.base import rule_docs
from torchmemlint.rules import ALL_RULES

TEXT_LINE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<column>\d+): (?P<code>TML\d{3}) "
                       r"(?P<fixable>\[\*\] )?(?P<message>.+)$")


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(capsys, *args):
    status = cli.main(["check", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_findings_are_reported_one_line_each_and_exit_1(project, capsys):
    write(project, "train.py", LEAKING_SCRIPT)
    status, out, err = check(capsys, "train.py")
    assert status == 1
    [line] = out.splitlines()
    match = TEXT_LINE.match(line)
    assert match and match["path"] == "train.py" and int(match["line"]) == LEAK_LINE
    assert match["code"] == "TML001" and int(match["column"]) >= 1
    assert match["fixable"] is None  # its fix is unsafe
    assert err.splitlines() == ["Found 1 error in 1 file checked.",
                                "[*] 1 fixable with `torchmemlint fix --unsafe-fixes`."]


def test_clean_file_exits_0(project, capsys):
    write(project, "train.py", FIXED_SCRIPT)
    status, out, err = check(capsys, ".")
    assert (status, out) == (0, "")
    assert "All checks passed" in err


def test_exit_zero(project, capsys):
    write(project, "train.py", LEAKING_SCRIPT)
    assert check(capsys, "--exit-zero", "train.py")[0] == 0


def test_no_python_files_exits_0_and_a_named_one_gets_a_warning(project, capsys):
    write(project, "README.md", "# hi\n")
    assert check(capsys, "README.md") == (0, "", "torchmemlint: warning: README.md: not a Python file "
                                                 "(no .py or .ipynb suffix, no python shebang); skipped\n")
    assert check(capsys, ".") == (0, "", "")
    status, out, _ = check(capsys, "--format", "json", ".")
    assert (status, json.loads(out)) == (0, [])


def test_noqa(project, capsys):
    suppressed = LEAKING_SCRIPT.replace("losses.append(loss)", "losses.append(loss)  # noqa: TML001")
    other_code = LEAKING_SCRIPT.replace("losses.append(loss)", "losses.append(loss)  # noqa: TML004")
    bare = LEAKING_SCRIPT.replace("losses.append(loss)", "losses.append(loss)  # noqa")
    write(project, "suppressed.py", suppressed)
    write(project, "other_code.py", other_code)
    write(project, "bare.py", bare)
    status, out, _ = check(capsys, ".")
    assert [TEXT_LINE.match(line)["path"] for line in out.splitlines()] == ["other_code.py"]


def test_statistics(project, capsys):
    write(project, "a.py", LEAKING_SCRIPT)
    write(project, "b.py", LEAKING_SCRIPT)
    write(project, "broken.py", "x = (\n")
    status, out, _ = check(capsys, "--statistics", ".")
    lines = out.splitlines()
    assert lines[-2:] == ["2  TML001  [ ] graph-retained-accumulation", "1  TML000  [ ] file-error"]
    assert len(lines) == 5


def test_json_format(project, capsys):
    write(project, "b.py", LEAKING_SCRIPT)
    write(project, "a.py", "x = (\n")
    status, out, _ = check(capsys, "--format", "json", ".")
    objects = json.loads(out)
    assert status == 2  # (a.py could not be checked)
    assert [(o["path"], o["code"]) for o in objects] == [("a.py", "TML000"), ("b.py", "TML001")]
    for obj in objects:  # the keys docs/json-format.md promises
        assert set(obj) == {"path", "line", "column", "end_line", "end_column", "code", "name",
                            "message", "cell", "fix", "related", "iteration"}
    assert objects[0]["name"] == "file-error" and objects[0]["fix"] is None
    assert objects[1]["line"] == LEAK_LINE and objects[1]["name"] == "graph-retained-accumulation"


def test_sarif_format(project, capsys):
    write(project, "train.py", LEAKING_SCRIPT)
    write(project, "bad.py", "x = (\n")
    status, out, _ = check(capsys, "--format", "sarif", ".")
    document = json.loads(out)
    assert document["version"] == "2.1.0"
    [sarif_run] = document["runs"]
    rules = sarif_run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == ["TML000", *(rule.code for rule in ALL_RULES)]
    assert all(rule["help"]["text"] for rule in rules)
    results = sarif_run["results"]
    assert [result["ruleId"] for result in results] == ["TML000", "TML001"]
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    location = results[1]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "train.py"
    assert location["region"]["startLine"] == LEAK_LINE


def test_github_format(project, capsys):
    write(project, "train.py", LEAKING_SCRIPT)
    status, out, _ = check(capsys, "--format", "github", ".")
    [line] = out.splitlines()
    assert re.fullmatch(rf"::error file=train\.py,line={LEAK_LINE},endLine={LEAK_LINE},col=(\d+),"
                        rf"endColumn=(\d+),title=TML001::.+", line)


def test_bad_files_get_one_line_each_and_the_run_continues(project, capsys):
    write(project, "pyproject.toml", "[tool.torchmemlint]\nmax-file-size = 100000\n")
    write(project, "a_syntax.py", "def f(:\n    x = 1\n")
    write(project, "b_latin1.py", "name = 'caf\xe9'\n".encode("latin-1"))
    write(project, "c_nul.py", b"x = 1\0\n")
    (project / "d_broken.py").symlink_to(project / "nowhere")
    write(project, "e_empty.py", "")
    write(project, "f_huge.py", "x = 1\n" * 20000)
    write(project, "g_dir.py/inner.txt", "not python")  # a folder named like a Python file
    write(project, "h_latin1_cookie.py", "# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n".encode("latin-1"))
    write(project, "z_train.py", LEAKING_SCRIPT)
    status, out, err = check(capsys, ".")
    lines = out.splitlines()
    assert status == 2  # some files could not be checked: not the status of findings alone
    by_path = {TEXT_LINE.match(line)["path"]: TEXT_LINE.match(line) for line in lines}
    assert list(by_path) == ["a_syntax.py", "b_latin1.py", "c_nul.py", "d_broken.py", "f_huge.py",
                             "z_train.py"]
    assert len(lines) == 6
    assert all(by_path[path]["code"] == "TML000" for path in list(by_path)[:-1])
    assert "syntax error" in by_path["a_syntax.py"]["message"]
    assert "decode" in by_path["b_latin1.py"]["message"]
    assert "NUL byte" in by_path["c_nul.py"]["message"]
    assert "broken symbolic link" in by_path["d_broken.py"]["message"]
    assert "over the limit" in by_path["f_huge.py"]["message"]
    assert by_path["z_train.py"]["code"] == "TML001"
    assert "Traceback" not in out + err


def test_unknown_rule_code_is_a_usage_error(project, capsys):
    write(project, "train.py", LEAKING_SCRIPT)
    status, out, err = check(capsys, "--select", "TML001,TML999", ".")
    assert status == 2 and out == ""
    assert err.strip() == ("torchmemlint: error: unknown rule code or prefix 'TML999' in --select "
                           "(`torchmemlint rules` lists the rules)")


def test_broken_pyproject_stops_only_the_files_it_governs(project, capsys):
    write(project, "pyproject.toml", "[tool.torchmemlint]\nselect = [\n")
    write(project, "train.py", LEAKING_SCRIPT)
    write(project, "other/pyproject.toml", "[tool.torchmemlint]\nselect = ['TML001']\n")
    write(project, "other/train.py", LEAKING_SCRIPT)
    status, out, err = check(capsys, ".")
    assert status == 2
    lines = [TEXT_LINE.match(line) for line in out.splitlines()]
    assert [(line["path"], line["code"]) for line in lines] == [(os.path.join("other", "train.py"), "TML001"),
                                                                ("train.py", "TML000")]
    assert lines[1]["message"].startswith(f"not checked: {project / 'pyproject.toml'}: invalid TOML")
    status, _, err = check(capsys, "--config", "pyproject.toml", "other")  # named: a usage error
    assert status == 2 and err.startswith(f"torchmemlint: error: {project / 'pyproject.toml'}: invalid TOML")


@pytest.mark.parametrize("content", ["[project\nname = 'x'\n", b"[project]\nname = '\xff'\n",
                                     "[tool.other]\nx = " + "[" * 5000 + "]" * 5000 + "\n"])
def test_broken_pyproject_of_another_tool_is_ignored_with_a_warning(project, capsys, content):
    write(project, "pyproject.toml", "[tool.torchmemlint]\nselect = ['TML001']\n")
    write(project, "vendored/pyproject.toml", content)
    write(project, "vendored/train.py", LEAKING_SCRIPT)
    status, out, err = check(capsys, ".")
    assert status == 1
    assert TEXT_LINE.match(out)["code"] == "TML001"
    assert err.startswith(f"torchmemlint: warning: {project / 'vendored' / 'pyproject.toml'}: ")
    assert "ignored (it does not configure torchmemlint)" in err and "Traceback" not in err


@pytest.mark.parametrize("extra", [[], ["--exit-zero"], ["-j", "2"]])
def test_a_file_that_cannot_be_checked_exits_2_findings_or_not(project, capsys, extra):
    write(project, "train.py", LEAKING_SCRIPT)
    assert check(capsys, *extra, "train.py")[0] == (0 if extra == ["--exit-zero"] else 1)
    write(project, "broken.py", "def f(:\n")
    assert check(capsys, *extra, ".")[0] == 2


def test_selection_options_and_pyproject_end_to_end(project, capsys):
    write(project, "train.py", LEAKING_SCRIPT)
    write(project, "tests/test_train.py", LEAKING_SCRIPT)
    assert check(capsys, "--ignore", "TML00", ".")[0] == 0
    assert check(capsys, "--select", "TML002", ".")[0] == 0
    assert check(capsys, "--ignore", "TML001", "--extend-select", "TML001", ".")[0] == 0
    write(project, "pyproject.toml", '[tool.torchmemlint]\n'
                                     'per-file-ignores = { "tests/**" = ["TML001"] }\n')
    status, out, _ = check(capsys, ".")
    assert [line.split(":")[0] for line in out.splitlines()] == ["train.py"]
    write(project, "pyproject.toml", '[tool.torchmemlint]\nextend-exclude = ["tests/"]\n')
    status, out, _ = check(capsys, ".")
    assert [line.split(":")[0] for line in out.splitlines()] == ["train.py"]
    status, out, _ = check(capsys, "tests/test_train.py")  # named: checked though excluded
    assert status == 1
    assert check(capsys, "--force-exclude", "tests/test_train.py") == (0, "", "")


@pytest.mark.parametrize("off_rule", [rule for rule in ALL_RULES if not rule.default_enabled],
                         ids=lambda rule: rule.code)
def test_off_by_default_rules_need_their_full_code(off_rule, project, capsys):
    write(project, "x.py", "")

    def selected(**options):
        [task] = plan(["x.py"], **options)
        return off_rule.code in task.rule_codes
    assert not selected()
    assert not selected(select=["TML"])
    assert not selected(extend_select=[off_rule.code[:-1]])
    assert selected(extend_select=[off_rule.code])
    assert selected(select=[off_rule.code])


def test_rules_lists_every_rule(capsys):
    assert cli.main(["rules"]) == 0
    out = capsys.readouterr().out
    for rule in ALL_RULES:
        assert re.search(rf"^{rule.code}\s+{rule.name}\s+{'on' if rule.default_enabled else 'off'}\s",
                         out, re.MULTILINE)


def test_explain(capsys):
    rule = ALL_RULES[0]
    assert cli.main(["explain", rule.code.lower()]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# {rule.code} {rule.name}\n")
    assert rule_docs(rule).splitlines()[-1] in out and len(out.splitlines()) > 10
    assert cli.main(["explain", "TML999"]) == 2
    assert "unknown rule 'TML999'" in capsys.readouterr().err


def test_usage_errors_exit_2(capsys):
    assert cli.main([]) == 2
    assert cli.main(["check", "--format", "xml"]) == 2
    assert cli.main(["--version"]) == 0


def test_a_crash_on_one_file_is_its_one_line_and_the_run_goes_on(project, capsys, monkeypatch):
    write(project, "a_train.py", LEAKING_SCRIPT)
    write(project, "b_train.py", LEAKING_SCRIPT)
    check_source = engine.check_source

    def broken_engine(source, path, *args, **kwargs):
        if path.startswith("a_"):
            raise ValueError("boom")
        return check_source(source, path, *args, **kwargs)
    monkeypatch.setattr(engine, "check_source", broken_engine)
    status, out, err = check(capsys, "-j", "1", ".")
    assert status == 2
    lines = [TEXT_LINE.match(line) for line in out.splitlines()]
    assert [(line["path"], line["code"]) for line in lines] == [("a_train.py", "TML000"), ("b_train.py", "TML001")]
    assert lines[0]["message"] == ("internal error while checking this file: ValueError: boom (please report it; "
                                   "TORCHMEMLINT_DEBUG=1 shows the traceback)")
    assert "Traceback" not in err
    monkeypatch.setenv("TORCHMEMLINT_DEBUG", "1")
    status, _, err = check(capsys, "-j", "1", ".")
    assert status == 2
    assert "Traceback (most recent call last)" in err and "ValueError: boom" in err


# --- as a user runs it -----------------------------------------------------------------------

def test_python_dash_m(project):
    write(project, "train.py", LEAKING_SCRIPT)
    result = run([sys.executable, "-m", "torchmemlint", "check", "train.py"], project, module_env())
    assert result.returncode == 1
    assert TEXT_LINE.match(result.stdout.strip())["code"] == "TML001"
    version = run([sys.executable, "-m", "torchmemlint", "--version"], project, module_env())
    assert version.returncode == 0 and version.stdout.startswith("torchmemlint ")


def test_linting_never_imports_torch(project):
    write(project, "train.py", LEAKING_SCRIPT)
    code = ("import sys; from torchmemlint import cli; status = cli.main(['check', '.']); "
            "print('torch loaded' if 'torch' in sys.modules else 'torch not loaded')")
    result = run([sys.executable, "-c", code], project, module_env())
    assert result.stdout.splitlines()[-1] == "torch not loaded", result.stderr
