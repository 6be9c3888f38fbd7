"""Helpers shared by the tests: a leaking training script, writing files, running commands."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path


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


def assert_fixed_findings_gone(found, applied, remaining) -> None:
    """After ``fix``, each rule has at most its findings before minus those whose fix applied:
    every fix removed its finding (another of the same rule, without a fix, may stay). A fix can
    apply to a finding that an earlier round's fix made (TML004's ``.cpu()`` after TML001's
    ``.detach()``), so ``fixed`` may exceed ``before``: then nothing of that rule may remain."""
    for code in {d.code for d in applied}:
        before = sum(d.code == code for d in found)
        fixed = sum(d.code == code for d in applied)
        after = sum(d.code == code for d in remaining)
        assert after <= max(0, before - fixed), (code, before, fixed, after)
