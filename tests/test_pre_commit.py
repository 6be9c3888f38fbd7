"""The pre-commit hook, run by the real pre-commit from a repository pinned at a commit."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import FIXED_SCRIPT, LEAKING_SCRIPT, REPO_ROOT, copy_working_tree, run, write

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


@pytest.mark.skipif(shutil.which("git") is None or not (REPO_ROOT / ".git").exists(),
                    reason="needs git and a git checkout of torchmemlint")
def test_hook_fails_on_a_leak_and_passes_once_fixed(tmp_path):
    hook_repo = tmp_path / "torchmemlint"
    hook_repo.mkdir()
    revision = commit_working_tree(hook_repo)
    project = tmp_path / "project"
    write(project, "train.py", LEAKING_SCRIPT)
    write(project, "notes.md", "not python\n")
    write(project, ".pre-commit-config.yaml",
          f"repos:\n- repo: {hook_repo}\n  rev: {revision}\n  hooks:\n  - id: torchmemlint\n")
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"))
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
