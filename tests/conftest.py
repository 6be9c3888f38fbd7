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


def pytest_collection_modifyitems(items):
    """The long runs first: modules kept on one xdist worker and replays in child processes.
    Started last, one of them would leave a single worker running alone at the end."""
    items.sort(key=lambda item: item.get_closest_marker("xdist_group") is None and
               item.get_closest_marker("slow") is None)
