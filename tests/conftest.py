"""Shared test helpers: a leaking training script, file writing, and running the real tools."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT / "fixtures"

# Keeps every loss's autograd graph alive: TML001 on the append line (line 11).
LEAKING_SCRIPT = """\
import torch


def train(model, loader, optimizer, criterion):
    losses = []
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss)
    return losses
"""
LEAK_LINE = 11
FIXED_SCRIPT = LEAKING_SCRIPT.replace("losses.append(loss)", "losses.append(loss.item())")


def write(root: Path, relative: str, content: str | bytes = "") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None,
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def module_env() -> dict[str, str]:
    """Environment in which ``python -m torchmemlint`` imports this working tree."""
    return dict(os.environ, PYTHONPATH=str(REPO_ROOT))


def copy_working_tree(destination: Path) -> None:
    """Copy the files git would see (tracked or new, not ignored) as they are now, committed
    or not: what a fresh clone of this state holds, without build leftovers."""
    listing = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             cwd=REPO_ROOT, check=True, capture_output=True, text=True).stdout
    for name in filter(None, listing.split("\0")):
        source = REPO_ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)


@pytest.fixture(scope="session")
def installed_env(tmp_path_factory) -> dict[str, str]:
    """Environment in which this working tree is installed as a wheel would install it: its
    entry points (console script, flake8 plugin) and package data are the real ones."""
    source = tmp_path_factory.mktemp("source")
    copy_working_tree(source)
    target = tmp_path_factory.mktemp("installed")
    run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--target", str(target), str(source)], cwd=source).check_returncode()
    return dict(os.environ, PYTHONPATH=str(target),
                PATH=f"{target / 'bin'}{os.pathsep}{os.environ['PATH']}")
