"""The options ruff and flake8 users type by habit, through ``cli.main`` and (for stdin, colour
on a terminal) as a real process: fixability in ``check``, ``--fix``, output formats and source
snippets, colour, stdin, exclusions on the command line, quiet, output file, --show-files,
--show-settings, --add-noqa."""
from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

import pytest

from support import LEAK_LINE, LEAKING_SCRIPT, module_env, run, write
from torchmemlint import cli

# TML001 with a safe fix (`.item()` on a running sum), line 8.
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
SAFE_LINE = 8
SAFE_FIXED = SAFE_SCRIPT.replace("total += loss", "total += loss.item()")


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    write(tmp_path, "safe.py", SAFE_SCRIPT)  # fixable by `fix`
    write(tmp_path, "train.py", LEAKING_SCRIPT)  # fixable only with --unsafe-fixes
    return tmp_path


def main(capsys, *args):
    status = cli.main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


# --- fixability ------------------------------------------------------------------------------

def test_check_marks_fixable_findings_and_counts_them(project, capsys):
    status, out, err = main(capsys, "check", ".")
    assert status == 1
    assert out.splitlines() == [
        f"safe.py:{SAFE_LINE}:18: TML001 [*] graph-attached value kept across iterations; store "
        "`.item()` or `.detach()` instead",
        f"train.py:{LEAK_LINE}:23: TML001 graph-attached value kept across iterations; store "
        "`.item()` or `.detach()` instead",
    ]
    assert err.splitlines() == ["Found 2 errors in 2 files checked.",
                                "[*] 1 fixable with `torchmemlint fix` (1 more with `--unsafe-fixes`)."]
    status, out, err = main(capsys, "check", "--unsafe-fixes", ".")
    assert [" [*] " in line for line in out.splitlines()] == [True, True]
    assert err.splitlines()[-1] == "[*] 2 fixable with `torchmemlint fix --unsafe-fixes`."


def test_statistics_has_a_fixable_column(project, capsys):
    write(project, "b.py", SAFE_SCRIPT)
    write(project, "broken.py", "x = (\n")
    status, out, _ = main(capsys, "check", "--statistics", ".")
    assert out.splitlines()[-2:] == ["3  TML001  [*] graph-retained-accumulation",
                                     "1  TML000  [ ] file-error"]


@pytest.mark.parametrize("options, safe_after, train_after, status, summary", [
    (["--fix"], SAFE_FIXED, LEAKING_SCRIPT, 1, "Fixed 1 error in 1 file; 1 remaining."),
    (["--fix", "--unsafe-fixes"], SAFE_FIXED,
     LEAKING_SCRIPT.replace("losses.append(loss)", "losses.append(loss.detach())"), 0,
     "Fixed 2 errors in 2 files; 0 remaining."),
])
def test_check_fix_works_like_ruff(project, capsys, options, safe_after, train_after, status, summary):
    result = main(capsys, "check", *options, ".")
    assert result[0] == status
    assert (project / "safe.py").read_text() == safe_after
    assert (project / "train.py").read_text() == train_after
    assert result[2].splitlines()[-1].startswith(summary[:-1])
    remaining = [line.split(":")[0] for line in result[1].splitlines()]
    assert remaining == ([] if status == 0 else ["train.py"])


def test_check_diff_writes_nothing(project, capsys):
    status, out, _ = main(capsys, "check", "--diff", ".")
    assert status == 1
    assert "-        total += loss\n+        total += loss.item()\n" in out
    assert (project / "safe.py").read_text() == SAFE_SCRIPT


# --- output formats and the source snippet ---------------------------------------------------

FULL_SAFE = """\
safe.py:8:18: TML001 [*] graph-attached value kept across iterations; store `.item()` or `.detach()` instead
  |
6 |         loss.backward()
7 |         optimizer.step()
8 |         total += loss
  |                  ^^^^ TML001
9 |     print(f"mean loss {total / len(loader):.4f}")
  |
  = help: keep the Python number (`.item()`)

"""


@pytest.mark.parametrize("options", [["--output-format", "full"], ["--show-source"],
                                     ["--format", "full"], ["--output-format", "concise", "--show-source"]])
def test_full_output_shows_the_source_and_a_caret(project, capsys, options):
    assert main(capsys, "check", *options, "safe.py")[1] == FULL_SAFE


def test_full_output_marks_unsafe_fixes_and_widens_the_gutter(project, capsys):
    out = main(capsys, "check", "--output-format", "full", "train.py")[1]
    assert out.splitlines()[1:7] == [
        "   |",
        " 9 |         loss.backward()",
        "10 |         optimizer.step()",
        "11 |         losses.append(loss)",
        "   |                       ^^^^ TML001",
        "12 |     return losses",
    ]
    assert out.splitlines()[-2] == "   = help: store it without its graph (`.detach()`) (unsafe fix)"


@pytest.mark.parametrize("options", [[], ["--output-format", "concise"], ["--format", "text"],
                                     ["--show-source", "--no-show-source"]])
def test_concise_output_is_one_line_per_finding(project, capsys, options):
    assert len(main(capsys, "check", *options, "safe.py")[1].splitlines()) == 1


def test_notebook_snippet_shows_the_cell_as_written(project, capsys):
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": ["%matplotlib inline\n", "import torch\n"]},
             {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": SAFE_SCRIPT.splitlines(keepends=True)}]
    write(project, "nb.ipynb", json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    status, out, _ = main(capsys, "check", "--output-format", "full", "nb.ipynb")
    assert out.splitlines()[0].startswith("nb.ipynb:cell 2:8:18: TML001 ")
    assert "8 |         total += loss\n  |                  ^^^^ TML001\n" in out


# --- colour ------------------------------------------------------------------------------------

def on_a_terminal(args, env):
    """Run torchmemlint with stdout on a pseudo-terminal; what it wrote there."""
    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "torchmemlint", *args], stdout=follower,
                               stderr=subprocess.DEVNULL, env=env, cwd=os.getcwd())
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=120)
    os.close(leader)
    return b"".join(chunks).decode()


@pytest.mark.parametrize("color, no_color, coloured", [
    ("auto", None, True), ("auto", "1", False), ("never", None, False), ("always", "1", True)])
def test_colour_on_a_terminal_unless_no_color(project, color, no_color, coloured):
    env = {key: value for key, value in module_env().items() if key not in ("NO_COLOR", "FORCE_COLOR")}
    if no_color:
        env["NO_COLOR"] = no_color
    out = on_a_terminal(["check", "--no-cache", "--color", color, "safe.py"], env)
    assert "TML001" in out
    assert ("\x1b[" in out) is coloured


@pytest.mark.parametrize("color, coloured", [("auto", False), ("always", True)])
def test_no_colour_into_a_pipe_unless_always(project, capsys, color, coloured):
    out = main(capsys, "check", "--color", color, "safe.py")[1]
    assert ("\x1b[" in out) is coloured


# --- stdin ---------------------------------------------------------------------------------------

def test_stdin_is_checked_under_the_given_name(project):
    write(project, "pyproject.toml", '[tool.torchmemlint]\nper-file-ignores = { "tests/**" = ["TML001"] }\n')
    by_name = subprocess.run([sys.executable, "-m", "torchmemlint", "check", "--stdin-filename",
                              "src/train.py", "-"], input=LEAKING_SCRIPT, capture_output=True, text=True,
                             cwd=project, env=module_env(), timeout=120)
    assert by_name.returncode == 1
    assert by_name.stdout.startswith(f"src/train.py:{LEAK_LINE}:23: TML001 ")
    # The name's settings apply: per-file-ignores of tests/.
    ignored = subprocess.run([sys.executable, "-m", "torchmemlint", "check", "--stdin-filename",
                              "tests/test_train.py"], input=LEAKING_SCRIPT, capture_output=True,
                             text=True, cwd=project, env=module_env(), timeout=120)
    assert (ignored.returncode, ignored.stdout) == (0, "")
    bare = subprocess.run([sys.executable, "-m", "torchmemlint", "check", "-"], input=LEAKING_SCRIPT,
                          capture_output=True, text=True, cwd=project, env=module_env(), timeout=120)
    assert bare.returncode == 1 and bare.stdout.startswith(f"-:{LEAK_LINE}:23: TML001 ")


def test_fix_from_stdin_writes_the_fixed_code_to_stdout(project):
    fixed = subprocess.run([sys.executable, "-m", "torchmemlint", "fix", "--stdin-filename", "safe.py", "-"],
                           input=SAFE_SCRIPT, capture_output=True, text=True, cwd=project,
                           env=module_env(), timeout=120)
    assert (fixed.returncode, fixed.stdout) == (0, SAFE_FIXED)
    assert (project / "safe.py").read_text() == SAFE_SCRIPT  # the file itself is not touched
    unchanged = subprocess.run([sys.executable, "-m", "torchmemlint", "check", "--fix", "-"],
                               input=LEAKING_SCRIPT, capture_output=True, text=True, cwd=project,
                               env=module_env(), timeout=120)
    assert unchanged.returncode == 1 and unchanged.stdout == LEAKING_SCRIPT
    assert f"-:{LEAK_LINE}:23: TML001" in unchanged.stderr


def test_stdin_with_other_paths_is_a_usage_error(project, capsys):
    status, _, err = main(capsys, "check", "-", "safe.py")
    assert status == 2 and "stdin" in err


# --- file selection on the command line ------------------------------------------------------

@pytest.mark.parametrize("options, reported", [
    ([], ["safe.py", "train.py", "vendor/lib.py"]),
    (["--extend-exclude", "vendor"], ["safe.py", "train.py"]),
    (["--exclude", "train.py,vendor/"], ["safe.py"]),
    (["--per-file-ignores", "train.py:TML001 vendor/*:TML"], ["safe.py"]),
    (["--per-file-ignores", "train.py:TML001", "--per-file-ignores", "safe.py:TML0"], ["vendor/lib.py"]),
])
def test_exclusions_and_per_file_ignores_on_the_command_line(project, capsys, options, reported):
    write(project, "vendor/lib.py", LEAKING_SCRIPT)
    out = main(capsys, "check", *options, ".")[1]
    assert [line.split(":")[0] for line in out.splitlines()] == reported


def test_command_line_per_file_ignores_replace_the_configured_ones(project, capsys):
    write(project, "pyproject.toml", '[tool.torchmemlint]\nper-file-ignores = { "safe.py" = ["TML001"] }\n')
    assert [line.split(":")[0] for line in main(capsys, "check", ".")[1].splitlines()] == ["train.py"]
    out = main(capsys, "check", "--per-file-ignores", "train.py:TML001", ".")[1]
    assert [line.split(":")[0] for line in out.splitlines()] == ["safe.py"]


@pytest.mark.parametrize("option, value", [("--per-file-ignores", "train.py"), ("--per-file-ignores", "x:TML999"),
                                           ("--exclude", "[z-a]")])
def test_bad_file_options_are_usage_errors(project, capsys, option, value):
    status, _, err = main(capsys, "check", option, value, ".")
    assert status == 2 and "error:" in err and "Traceback" not in err


def test_git_info_exclude_is_honoured(project, capsys):
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    write(project, ".git/info/exclude", "train.py\n")
    out = main(capsys, "check", ".")[1]
    assert [line.split(":")[0] for line in out.splitlines()] == ["safe.py"]
    write(project, ".gitignore", "!train.py\n")  # a .gitignore overrides info/exclude, as in git
    out = main(capsys, "check", ".")[1]
    assert [line.split(":")[0] for line in out.splitlines()] == ["safe.py", "train.py"]


def test_show_files(project, capsys):
    write(project, "build/generated.py", LEAKING_SCRIPT)
    status, out, _ = main(capsys, "check", "--show-files", ".")
    assert status == 0
    assert out.splitlines() == [str(project / "safe.py"), str(project / "train.py")]


def test_show_settings(project, capsys):
    write(project, "pyproject.toml", '[tool.torchmemlint]\nignore = ["TML002"]\n')
    status, out, _ = main(capsys, "check", "--show-settings", "--extend-exclude", "vendor", "train.py")
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == f"Resolved settings for: {project / 'train.py'}"
    assert lines[1] == f"Settings path: {project / 'pyproject.toml'}"
    assert "TML001" in lines[3] and "TML002" not in lines[3]
    assert f"'vendor' (in {project})" in out


# --- quiet, silent, output file --------------------------------------------------------------

def test_quiet_silent_and_output_file(project, capsys):
    status, out, err = main(capsys, "check", "-q", ".")
    assert (status, len(out.splitlines()), err) == (1, 2, "")
    assert main(capsys, "check", "--silent", ".") == (1, "", "")
    status, out, err = main(capsys, "check", "-o", "report.json", "--output-format", "json", ".")
    assert (status, out) == (1, "")
    assert [o["path"] for o in json.loads((project / "report.json").read_text())] == ["safe.py", "train.py"]
    status, _, err = main(capsys, "check", "-o", "missing/folder/report.txt", ".")
    assert status == 2 and "--output-file" in err


# --- --add-noqa ------------------------------------------------------------------------------

ADD_NOQA_CASES = [
    ("losses.append(loss)", "losses.append(loss)  # noqa: TML001"),
    ("losses.append(loss)  # noqa: E501", "losses.append(loss)  # noqa: E501, TML001"),
    ("losses.append(loss)  # keep: needed later", "losses.append(loss)  # keep: needed later  # noqa: TML001"),
]


@pytest.mark.parametrize("line, expected", ADD_NOQA_CASES)
def test_add_noqa_merges_and_is_idempotent(project, capsys, line, expected):
    path = write(project, "train.py", LEAKING_SCRIPT.replace("losses.append(loss)", line).replace("\n", "\r\n"))
    status, out, err = main(capsys, "check", "--add-noqa", "train.py")
    assert status == 0 and err == "Added 1 noqa directive in 1 file.\n"
    assert path.read_bytes() == LEAKING_SCRIPT.replace("losses.append(loss)", expected).replace("\n", "\r\n").encode()
    assert main(capsys, "check", "--add-noqa", "train.py")[2] == "Added 0 noqa directives in 0 files.\n"
    assert path.read_bytes().count(b"noqa") == 1
    assert main(capsys, "check", "train.py")[0] == 0


def test_add_noqa_means_the_same_to_flake8(project, installed_env):
    run(["torchmemlint", "check", "--add-noqa", "train.py"], project, installed_env).check_returncode()
    flake8 = run([sys.executable, "-m", "flake8", "--isolated", "--select", "TML", "train.py"], project, installed_env)
    assert (flake8.returncode, flake8.stdout) == (0, "")


def test_add_noqa_leaves_a_line_ending_inside_a_string(project, capsys):
    script = 'import torch\nlosses = []\nfor x in data:\n    loss = model(x).sum()\n    loss.backward()\n' \
             '    losses.append(loss); note = """a\nb"""\n'
    path = write(project, "train.py", script)
    assert main(capsys, "check", "train.py")[1].startswith("train.py:6:19: TML001 ")
    status, _, err = main(capsys, "check", "--add-noqa", "train.py")
    assert path.read_text() == script
    assert err.splitlines() == ["train.py:6: no `# noqa` added: the line ends inside a string",
                                "Added 0 noqa directives in 0 files."]


def test_one_file_is_checked_without_a_process_pool(project, capsys, monkeypatch):
    """The default ``-j`` is one worker per core; one file still runs in this process (a pool
    costs more than the file)."""
    import multiprocessing

    def no_pool(*args, **kwargs):
        raise AssertionError("a process pool was started for one file")
    monkeypatch.setattr(multiprocessing, "get_context", no_pool)
    assert main(capsys, "check", "--no-cache", "safe.py")[0] == 1
    status, _, err = main(capsys, "check", "--no-cache", "-j", "2", ".")  # two files: a pool starts
    assert status == 2 and "a process pool was started" in err


# --- TML000 ---------------------------------------------------------------------------------------

def test_file_errors_can_be_explained(capsys):
    assert cli.main(["explain", "TML000"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# TML000 file-error\n") and "## How to silence it" in out


@pytest.mark.parametrize("options, config, reported", [
    ([], "", True),
    (["--ignore", "TML000"], "", False),
    (["--ignore", "TML0"], "", True),  # a prefix never hides a file that was not checked
    (["--ignore", "TML"], "", True),
    ([], 'ignore = ["TML000"]', False),
    ([], 'per-file-ignores = { "gen/**" = ["TML000"] }', False),
    ([], 'per-file-ignores = { "other/**" = ["TML000"] }', True),
    (["--per-file-ignores", "gen/*:TML000"], "", False),
])
def test_file_errors_are_ignored_only_by_their_full_code(project, capsys, options, config, reported):
    write(project, "pyproject.toml", f"[tool.torchmemlint]\n{config}\n")
    write(project, "gen/broken.py", "x = (\n")
    out = main(capsys, "check", *options, "gen")[1]
    assert ("gen/broken.py:1:5: TML000 syntax error" in out) is reported
    assert main(capsys, "check", *options, "gen")[1] == out  # the same from the cache


# --- more of ruff's check options --------------------------------------------------------------

@pytest.mark.parametrize("options, reported", [
    ([], ["safe.py"]),  # train.py is git-ignored
    (["--no-respect-gitignore"], ["safe.py", "train.py"]),
    (["--respect-gitignore"], ["safe.py"]),
])
def test_respect_gitignore(project, capsys, options, reported):
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    write(project, ".gitignore", "train.py\n")
    out = main(capsys, "check", "-n", *options, ".")[1]
    assert [line.split(":")[0] for line in out.splitlines()] == reported


@pytest.mark.parametrize("options, reported", [
    ([], []),  # the configuration ignores TML001
    (["--isolated"], ["safe.py", "train.py"]),
    (["--isolated", "--extend-per-file-ignores", "safe.py:TML001"], ["train.py"]),
    (["--extend-per-file-ignores", "safe.py:TML001", "--extend-select", "TML001"], ["train.py"]),
])
def test_isolated_and_extend_per_file_ignores(project, capsys, options, reported):
    write(project, "pyproject.toml", '[tool.torchmemlint]\nignore = ["TML001"]\n')
    out = main(capsys, "check", *options, ".")[1]
    assert [line.split(":")[0] for line in out.splitlines()] == reported


def test_isolated_with_config_is_a_usage_error(project, capsys):
    write(project, "pyproject.toml", "[tool.torchmemlint]\n")
    status, _, err = main(capsys, "check", "--isolated", "--config", "pyproject.toml", ".")
    assert status == 2 and "--isolated" in err


def test_ignore_noqa(project, capsys):
    write(project, "safe.py", SAFE_SCRIPT.replace("total += loss", "total += loss  # noqa: TML001"))
    assert [line.split(":")[0] for line in main(capsys, "check", ".")[1].splitlines()] == ["train.py"]
    out = main(capsys, "check", "--ignore-noqa", ".")[1]
    assert [line.split(":")[0] for line in out.splitlines()] == ["safe.py", "train.py"]


@pytest.mark.parametrize("options, status, out_lines", [
    (["--fix-only"], 0, 0),  # the unsafe TML001 of train.py remains, unreported
    (["--fix-only", "--exit-non-zero-on-fix"], 1, 0),
    (["--fix", "--exit-zero"], 0, 1),
    (["--fix", "--show-fixes"], 1, 4),  # the remaining finding, then the fixes applied
])
def test_fix_only_exit_non_zero_on_fix_and_show_fixes(project, capsys, options, status, out_lines):
    result = main(capsys, "check", *options, ".")
    assert (result[0], len(result[1].splitlines())) == (status, out_lines)
    assert (project / "safe.py").read_text() == SAFE_FIXED
    if "--show-fixes" in options:
        assert result[1].splitlines()[1:] == ["Fixed 1 error:", "- safe.py:",
                                              "    1 × TML001 (graph-retained-accumulation)"]
