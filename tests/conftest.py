"""Session fixtures shared by the tests (plain helpers live in support.py)."""
from __future__ import annotations

import os
import sys

import pytest

from support import copy_working_tree, run


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
