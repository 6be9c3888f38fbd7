"""``torchmemlint fix`` end to end: writing (atomic, mode kept), ``--diff``, safe vs unsafe,
rule selection, the summary, refused fixes, ``check --format json`` fixes. The pre-commit hook
is tested in test_pre_commit.py."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from support import module_env, run, write
from torchmemlint import api, cli, fix

# TML001 with a safe fix (line 10), TML001 + TML004 with unsafe ones (line 11), TML002 (line 8).
SCRIPT = """\
import torch

total_loss = 0
outputs = []
for x, y in loader:
    out = model(x)
    loss = criterion(out, y)
    loss.backward()
    opt.step()
    total_loss += loss  # running sum
    outputs.append(out)
print(f"{total_loss:.3f}")
"""
SAFE_FIXED = SCRIPT.replace("total_loss += loss ", "total_loss += loss.item() ")
ZERO_GRAD_ADDED = ("    loss.backward()\n", "    opt.zero_grad(set_to_none=True)\n    loss.backward()\n")
ALL_FIXED = SAFE_FIXED.replace("outputs.append(out)", "outputs.append(out.detach().cpu())").replace(*ZERO_GRAD_ADDED)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def fix_command(capsys, *args):
    status = cli.main(["fix", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_fix_applies_safe_fixes_and_reports_the_rest(project, capsys):
    path = write(project, "train.py", SCRIPT)
    status, out, err = fix_command(capsys, "train.py")
    assert path.read_text() == SAFE_FIXED
    assert status == 1  # findings remain
    assert [line.split(": ")[1].split()[0] for line in out.splitlines()] == ["TML002", "TML001"]
    assert err.strip() == "Fixed 1 error in 1 file; 2 remaining (2 fixable with --unsafe-fixes)."


def test_unsafe_fixes(project, capsys):
    path = write(project, "train.py", SCRIPT)
    status, out, err = fix_command(capsys, "--unsafe-fixes", "--show-fixes", "train.py")
    assert path.read_text() == ALL_FIXED
    assert status == 0
    assert out == ("Fixed 4 errors:\n- train.py:\n    2 × TML001 (graph-retained-accumulation)\n"
                   "    1 × TML002 (missing-zero-grad)\n    1 × TML004 (device-tensor-in-growing-container)\n")
    assert err.strip() == "Fixed 4 errors in 1 file; 0 remaining."
    # Idempotent: a second run changes nothing and finds nothing.
    assert fix_command(capsys, "--unsafe-fixes", "train.py")[0] == 0
    assert path.read_text() == ALL_FIXED
    assert cli.main(["check", "train.py"]) == 0


def test_selection_applies_to_fix(project, capsys):
    path = write(project, "train.py", SCRIPT)
    fix_command(capsys, "--unsafe-fixes", "--select", "TML002", "train.py")
    assert path.read_text() == SCRIPT.replace(*ZERO_GRAD_ADDED)
    path.write_text(SCRIPT)
    fix_command(capsys, "--unsafe-fixes", "--ignore", "TML002,TML004", "train.py")
    assert path.read_text() == SAFE_FIXED.replace("outputs.append(out)", "outputs.append(out.detach())")


def test_diff_writes_nothing_and_exits_1_when_there_would_be_changes(project, capsys):
    path = write(project, "train.py", SCRIPT)
    status, out, err = fix_command(capsys, "--diff", "train.py")
    assert status == 1
    assert path.read_text() == SCRIPT
    assert out == (
        "# train.py:10:19: TML001 graph-attached value kept across iterations; store `.item()` or `.detach()` "
        "instead\n#   fixed (safe): keep the Python number (`.item()`)\n"
        "--- a/train.py\n+++ b/train.py\n@@ -7,6 +7,6 @@\n"
        "     loss = criterion(out, y)\n     loss.backward()\n     opt.step()\n"
        "-    total_loss += loss  # running sum\n+    total_loss += loss.item()  # running sum\n"
        "     outputs.append(out)\n" + ' print(f"{total_loss:.3f}")\n'
        "# train.py:9:5: TML002 loop calls backward() and optimizer.step() but never resets gradients; they "
        "accumulate across steps\n#   not fixed: its fix is unsafe (reset the optimizer's gradients every step); "
        "apply it with --unsafe-fixes\n"
        "# train.py:11:20: TML001 graph-attached value kept across iterations; store `.item()` or `.detach()` "
        "instead\n#   not fixed: its fix is unsafe (store it without its graph (`.detach()`)); apply it with "
        "--unsafe-fixes\n")
    assert err.strip() == "Would fix 1 error in 1 file; 2 remaining (2 fixable with --unsafe-fixes)."
    # The diff is a patch that `git apply` takes, giving what `fix` writes.
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "apply"], input=out, text=True, cwd=project, check=True)
    assert path.read_text() == SAFE_FIXED


# Two fixes far apart (two hunks) and a finding whose value's type is unknown (no fix).
REVIEWED = """\
import torch

model.eval()
for x, y in val_loader:
    out = model(x)
    print((out.argmax(1) == y).float().mean().item())

history = []
total = 0
for batch in train_loader:
    result = model(batch)
    loss = result["loss"]
    opt.zero_grad()
    loss.backward()
    opt.step()
    history.append(result)
    total += loss
print(f"{total:.2f}")
"""


def test_diff_is_a_review_that_git_applies(project, capsys):
    path = write(project, "train.py", REVIEWED)
    status, out, _ = fix_command(capsys, "--diff", "--unsafe-fixes", "train.py")
    assert status == 1
    assert path.read_text() == REVIEWED
    headers = [line for line in out.splitlines() if line.startswith(("#", "---", "@@"))]
    assert headers == [
        "# train.py:5:11: TML003 forward pass in evaluation code without torch.no_grad()/inference_mode(); "
        "activations are kept for a backward that never comes",
        "#   fixed (safe): run the evaluation under torch.no_grad()",
        "--- a/train.py",
        "@@ -1,9 +1,10 @@",
        "# train.py:17:14: TML001 graph-attached value kept across iterations; store `.item()` or `.detach()` "
        "instead (graph made by `model(...)`; read as `['loss']`)",
        "#   fixed (safe): keep the Python number (`.item()`)",
        "--- a/train.py",
        "@@ -15,5 +15,5 @@",  # counted from the text the first hunk made, where this one starts
        # Positioned on the file as it is (the fixes above moved it down a line).
        "# train.py:16:20: TML001 graph-attached value kept across iterations; store `.item()` or `.detach()` "
        "instead",
        "#   not fixed: what the value holds is not known (a tensor, a tuple, a dict?)",
    ]
    # Comment lines before a patch header are what git apply and patch skip: the review applies.
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "apply"], input=out, text=True, cwd=project, check=True)
    fixed = path.read_text()
    path.write_text(REVIEWED)
    fix_command(capsys, "--unsafe-fixes", "train.py")
    assert path.read_text() == fixed


def test_diff_exits_0_when_nothing_would_change(project, capsys):
    write(project, "train.py", SAFE_FIXED)
    status, out, _ = fix_command(capsys, "--diff", "train.py")
    # No patch, only the review of what is left (the unsafe fixes are not asked for).
    assert status == 0
    assert [line for line in out.splitlines() if not line.startswith("#   not fixed: its fix is unsafe")] == [
        "# train.py:9:5: TML002 loop calls backward() and optimizer.step() but never resets gradients; they "
        "accumulate across steps",
        "# train.py:11:20: TML001 graph-attached value kept across iterations; store `.item()` or `.detach()` "
        "instead"]
    write(project, "clean.py", "x = 1\n")
    assert fix_command(capsys, "--diff", "clean.py") == (0, "", "Would fix 0 errors in 0 files; 0 remaining.\n")


def test_write_keeps_mode_and_leaves_no_temporary_file(project, capsys):
    path = write(project, "train.py", SCRIPT)
    path.chmod(0o755)
    fix_command(capsys, "train.py")
    assert path.stat().st_mode & 0o777 == 0o755
    assert sorted(p.name for p in project.iterdir()) == [".torchmemlint_cache", "train.py"]


def test_write_keeps_crlf_bom_and_latin1_bytes(project, capsys):
    crlf_bom = write(project, "crlf_bom.py", b"\xef\xbb\xbf" + SCRIPT.replace("\n", "\r\n").encode())
    latin1_text = "# -*- coding: latin-1 -*-\n# café\n" + SCRIPT
    latin1 = write(project, "latin1.py", latin1_text.encode("latin-1"))
    fix_command(capsys, "--unsafe-fixes", ".")
    assert crlf_bom.read_bytes() == b"\xef\xbb\xbf" + ALL_FIXED.replace("\n", "\r\n").encode()
    expected = ("# -*- coding: latin-1 -*-\n# café\n" + ALL_FIXED).encode("latin-1")
    assert latin1.read_bytes() == expected


def test_fix_that_would_break_the_file_is_not_written(project, capsys, monkeypatch):
    path = write(project, "train.py", SCRIPT)
    path.chmod(0o640)
    before = path.stat()

    def broken_fixes(text, fixes):  # a buggy fix: its edit leaves an unclosed bracket
        new_text, placed, refused = real_apply(text, fixes)
        return new_text.replace("loss.item()", "loss.item(", 1), placed, refused

    real_apply = fix._apply
    monkeypatch.setattr(fix, "_apply", broken_fixes)
    status, out, err = fix_command(capsys, "train.py")
    assert status == 2
    assert path.read_text() == SCRIPT
    assert path.stat().st_mtime_ns == before.st_mtime_ns and path.stat().st_ino == before.st_ino
    assert sorted(p.name for p in project.iterdir()) == ["train.py"]
    assert "train.py:1:1: TML000 a fix would break the file" in out
    assert "file left unchanged" in out
    assert err.strip() == "Fixed 0 errors in 0 files; 4 remaining (2 fixable with --unsafe-fixes)."


def test_diff_exits_2_for_a_file_that_cannot_be_checked(project, capsys):
    write(project, "broken.py", "def f(:\n")
    status, out, _ = fix_command(capsys, "--diff", "broken.py")
    assert status == 2  # (the position is CPython's, as in check: ast reads the file first)
    assert out.startswith("broken.py:1:7: TML000 syntax error: invalid syntax")


def test_a_write_that_fails_is_reported_and_nothing_counts_as_fixed(project, capsys, monkeypatch):
    path = write(project, "train.py", SCRIPT)

    def refuse(target, data):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(api, "write_atomic", refuse)
    status, out, err = fix_command(capsys, "train.py")
    assert status == 2
    assert path.read_text() == SCRIPT
    assert "train.py:1:1: TML000 cannot write the fixed file: Permission denied" in out
    assert err.strip() == "Fixed 0 errors in 0 files; 4 remaining (2 fixable with --unsafe-fixes)."


def test_unreadable_and_unparsable_files_are_reported_and_the_run_continues(project, capsys):
    write(project, "broken.py", "def f(:\n")
    path = write(project, "train.py", SCRIPT)
    status, out, _ = fix_command(capsys, ".")
    assert status == 2
    assert "broken.py:1:" in out and "TML000" in out
    assert path.read_text() == SAFE_FIXED


def test_check_json_shows_each_fix(project):
    write(project, "train.py", SCRIPT)
    result = run([sys.executable, "-m", "torchmemlint", "check", "--format", "json", "train.py"],
                 cwd=project, env=module_env())
    assert result.returncode == 1, result.stderr
    fixes = {(d["line"], d["code"]): d["fix"] for d in json.loads(result.stdout)}
    assert fixes[(10, "TML001")] == {
        "applicability": "safe", "safe": True, "message": "keep the Python number (`.item()`)",
        "edits": [{"line": 10, "column": 19, "end_line": 10, "end_column": 23, "content": "loss.item()"}]}
    assert fixes[(11, "TML001")]["safe"] is False
    assert fixes[(9, "TML002")]["safe"] is False
    [edit] = fixes[(9, "TML002")]["edits"]  # inserted before ``loss.backward()``
    assert (edit["line"], edit["end_line"]) == (8, 8) and "opt.zero_grad(set_to_none=True)" in edit["content"]


def test_fixing_never_imports_torch(project):
    write(project, "train.py", SCRIPT)
    code = ("import sys; from torchmemlint import cli; status = cli.main(['fix', '--unsafe-fixes', '.']); "
            "print('torch loaded' if 'torch' in sys.modules else 'torch not loaded')")
    result = run([sys.executable, "-c", code], project, module_env())
    assert result.stdout.splitlines()[-1] == "torch not loaded", result.stderr
    assert (project / "train.py").read_text() == ALL_FIXED


def test_fix_in_parallel_writes_what_one_process_writes(tmp_path, monkeypatch, capsys):
    trees = {}
    for jobs in ("1", "2"):
        folder = tmp_path / jobs
        for index in range(6):
            write(folder, f"pkg{index % 2}/train_{index}.py", SCRIPT if index % 3 else "x = 1\n")
        write(folder, "broken.py", "def f(:\n")
        monkeypatch.chdir(folder)
        status, out, err = fix_command(capsys, "--no-cache", "-j", jobs, ".")
        trees[jobs] = (status, out, err, {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*.py"))})
    assert trees["1"] == trees["2"]
    assert trees["1"][0] == 2 and "broken.py:1:7: TML000" in trees["1"][1]


def test_fix_answers_files_with_nothing_to_fix_from_the_cache(project, capsys, monkeypatch):
    write(project, "pyproject.toml", "")
    write(project, "clean.py", "x = 1\n")
    write(project, "train.py", SCRIPT)
    assert cli.main(["check", "-j", "1", "."]) == 1
    capsys.readouterr()
    fixed = []
    real_fix_file = api.fix_file
    monkeypatch.setattr(api, "fix_file", lambda task, *a: fixed.append(task.path) or real_fix_file(task, *a))
    assert fix_command(capsys, "-j", "1", ".")[0] == 1  # (train.py keeps a finding only --unsafe-fixes fixes)
    assert fixed == ["train.py"]  # clean.py: answered from check's cache entry
    fixed.clear()
    assert fix_command(capsys, "-j", "1", ".")[0] == 1
    assert fixed == []  # train.py as fixed was stored: nothing left to parse
