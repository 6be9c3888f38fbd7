"""The pre-commit hooks (check and fix), run by the real pre-commit from a repository pinned at a
commit."""
import os
import shutil
import subprocess
import sys

import pytest

from support import FIXED_SCRIPT, LEAKING_SCRIPT, REPO_ROOT, copy_working_tree, run, write

# (one xdist worker runs this module: its module fixtures are computed once, not once per worker)
pytestmark = pytest.mark.xdist_group("test_pre_commit")

GIT_IDENTITY = ["-c", "user.name=torchmemlint tests", "-c", "user.email=tests@example.invalid"]


def git(*args, cwd):
    subprocess.run(["git", *GIT_IDENTITY, *args], cwd=cwd, check=True, capture_output=True)


def commit_working_tree(destination):
    """A repository whose HEAD is this working tree as it is now (committed or not), like
    `pre-commit try-repo` does, so the test checks the code under test, not an older commit."""
    copy_working_tree(destination)
    git("init", "-q", cwd=destination)
    git("add", "-A", cwd=destination)
    git("commit", "-q", "-m", "snapshot", cwd=destination)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=destination, check=True,
                          capture_output=True, text=True).stdout.strip()


needs_git_checkout = pytest.mark.skipif(
    shutil.which("git") is None or not (REPO_ROOT / ".git").exists(),
    reason="needs git and a git checkout of torchmemlint")


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    """This working tree as a hook repository, and one PRE_COMMIT_HOME for the module's tests,
    so pre-commit builds the hook's environment once."""
    root = tmp_path_factory.mktemp("hooks")
    repository = root / "torchmemlint"
    repository.mkdir()
    revision = commit_working_tree(repository)
    return repository, revision, dict(os.environ, PRE_COMMIT_HOME=str(root / "pre-commit-home"))


@needs_git_checkout
def test_hook_fails_on_a_leak_and_passes_once_fixed(tmp_path, hook_repo):
    repository, revision, env = hook_repo
    project = tmp_path / "project"
    write(project, "train.py", LEAKING_SCRIPT)
    write(project, "notes.md", "not python\n")
    write(project, ".pre-commit-config.yaml",
          f"repos:\n- repo: {repository}\n  rev: {revision}\n  hooks:\n  - id: torchmemlint\n")
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)
    command = [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color=never"]

    failing = run(command, project, env)
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "torchmemlint" in failing.stdout and "Failed" in failing.stdout
    assert "train.py:11:" in failing.stdout and "TML001" in failing.stdout

    write(project, "train.py", FIXED_SCRIPT)
    git("add", "-A", cwd=project)
    passing = run(command, project, env)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "Passed" in passing.stdout


@needs_git_checkout
def test_hook_checks_staged_notebooks(tmp_path, hook_repo):
    """pre-commit hands ``.ipynb`` files (type ``jupyter``) to the check hook."""
    repository, revision, env = hook_repo
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(REPO_ROOT / "fixtures" / "notebooks" / "finetune_classifier.ipynb", project / "train.ipynb")
    write(project, ".pre-commit-config.yaml",
          f"repos:\n- repo: {repository}\n  rev: {revision}\n  hooks:\n  - id: torchmemlint\n")
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)
    failing = run([sys.executable, "-m", "pre_commit", "run", "--all-files", "--color=never"], project, env)
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "train.ipynb:cell 5:9:24: TML001" in failing.stdout


@needs_git_checkout
def test_fix_hook_fixes_the_file_and_fails_the_run(tmp_path, hook_repo):
    """``pre-commit try-repo`` runs the ``torchmemlint-fix`` hook: it applies the safe fix, so
    pre-commit fails the run (files were modified) and the files are left fixed, a notebook's
    cells too."""
    repository, _, env = hook_repo
    project = tmp_path / "project"
    write(project, "train.py", SAFELY_FIXABLE_SCRIPT)
    notebooks = REPO_ROOT / "fixtures" / "notebooks"
    shutil.copy(notebooks / "compact_one_line.ipynb", project / "evaluate.ipynb")  # a safe TML003 fix
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)
    command = [sys.executable, "-m", "pre_commit", "try-repo", str(repository), "torchmemlint-fix",
               "--all-files", "--color=never"]

    fixing = run(command, project, env)
    assert fixing.returncode == 1, fixing.stdout + fixing.stderr
    assert "files were modified by this hook" in fixing.stdout
    assert (project / "train.py").read_text() == SAFELY_FIXED_SCRIPT
    assert (project / "evaluate.ipynb").read_bytes() == (notebooks / "compact_one_line.ipynb.fixed").read_bytes()

    git("add", "-A", cwd=project)
    fixed = run(command, project, env)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert (project / "train.py").read_text() == SAFELY_FIXED_SCRIPT


# TML001 whose fix is safe: a running sum of a scalar loss into a Python number.
SAFELY_FIXABLE_SCRIPT = """\
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
SAFELY_FIXED_SCRIPT = SAFELY_FIXABLE_SCRIPT.replace("total += loss", "total += loss.item()")


@needs_git_checkout
def test_hook_runs_once_for_all_files(tmp_path, hook_repo):
    """``require_serial: true``: pre-commit hands every file to one invocation (which uses the
    cores itself) instead of one invocation per core, so the summary is printed once."""
    repository, revision, env = hook_repo
    project = tmp_path / "project"
    for number in range(24):
        write(project, f"pkg/module_{number:02}.py", LEAKING_SCRIPT)
    write(project, ".pre-commit-config.yaml",
          f"repos:\n- repo: {repository}\n  rev: {revision}\n  hooks:\n  - id: torchmemlint\n"
          "    args: [--no-cache]\n")
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)
    result = run([sys.executable, "-m", "pre_commit", "run", "--all-files", "--color=never"], project, env)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.count("Found 24 errors in 24 files checked.") == 1, result.stdout
