"""Package metadata (what PyPI and pip see) and what ``verify`` needs installed: a torch range in
the ``verify`` extra, checked at start with a clear message, and ``--plot`` refused before any
replay when matplotlib is missing."""
from __future__ import annotations

import sys
import time

import pytest

from support import LEAKING_SCRIPT, REPO_ROOT, module_env, run, write
from torchmemlint.verify.requirements import MINIMUM_TORCH, release

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

with open(REPO_ROOT / "pyproject.toml", "rb") as _file:
    PROJECT = tomllib.load(_file)["project"]
MINIMUM = ".".join(map(str, MINIMUM_TORCH))


def test_verify_extra_takes_a_torch_range_and_ci_keeps_its_pin():
    extras = PROJECT["optional-dependencies"]
    assert f"torch>={MINIMUM}" in extras["verify"]
    assert "torch==2.13.0" in extras["test"]  # CI's own pin
    assert "sarif-pydantic" in extras["test"]  # validates the SARIF output (tests/test_reports.py)


def test_metadata_has_urls_classifiers_and_an_spdx_license():
    assert PROJECT["license"] == "MIT"  # PEP 639: an SPDX expression, not a table
    assert {"Homepage", "Documentation", "Rules", "Issues"} <= set(PROJECT["urls"])
    classifiers = PROJECT["classifiers"]
    assert "Framework :: Flake8" in classifiers
    assert {f"Programming Language :: Python :: 3.{minor}" for minor in (10, 11, 12, 13)} <= set(classifiers)
    assert not [c for c in classifiers if c.startswith("License ::")]  # superseded by the SPDX license


@pytest.mark.parametrize("version, numbers", [("2.13.0", (2, 13, 0)), ("2.1.0+cu121", (2, 1, 0)),
                                              ("2.0.1", (2, 0, 1)), ("2.5.0a0+git1234", (2, 5, 0))])
def test_release_numbers(version, numbers):
    assert release(version) == numbers


def hidden_modules_env(tmp_path, *names):
    """An environment whose Python cannot import ``names``, as if they were not installed."""
    folder = tmp_path / "site-hide"
    write(folder, "sitecustomize.py", "import sys\n" + "".join(f"sys.modules[{n!r}] = None\n" for n in names))
    env = module_env()
    env["PYTHONPATH"] = f"{folder}:{env['PYTHONPATH']}"
    return env


def verify(args, cwd, env):
    started = time.monotonic()
    result = run([sys.executable, "-m", "torchmemlint", "verify", "--device", "cpu", *args], cwd, env)
    return result, time.monotonic() - started


def test_plot_without_matplotlib_says_so_before_any_replay(tmp_path):
    write(tmp_path, "train.py", LEAKING_SCRIPT)
    result, _ = verify(["--plot", "memory.png", "train.py"], tmp_path, hidden_modules_env(tmp_path, "matplotlib"))
    assert result.returncode == 2
    assert result.stderr == ("torchmemlint: error: --plot needs matplotlib, which is not installed here "
                             "(pip install matplotlib, or pip install 'torchmemlint[verify]')\n")
    assert result.stdout == ""  # no replay ran: no table
    assert not (tmp_path / "memory.png").exists()


def test_verify_without_torch_says_how_to_install_it(tmp_path):
    write(tmp_path, "train.py", LEAKING_SCRIPT)
    result, _ = verify(["train.py"], tmp_path, hidden_modules_env(tmp_path, "torch"))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == ("torchmemlint: error: verify needs PyTorch, which is not installed here "
                             "(pip install 'torchmemlint[verify]')\n")


def test_verify_with_too_old_a_torch_names_the_versions(tmp_path):
    """An older torch's metadata first on the path: verify refuses before replaying."""
    write(tmp_path, "train.py", LEAKING_SCRIPT)
    old = tmp_path / "old-torch"
    write(old, "torch-2.0.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: torch\nVersion: 2.0.1\n")
    env = module_env()
    env["PYTHONPATH"] = f"{old}:{env['PYTHONPATH']}"
    result, _ = verify(["train.py"], tmp_path, env)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (f"torchmemlint: error: verify needs PyTorch {MINIMUM} or newer, but torch 2.0.1 "
                             f"is installed (pip install 'torch>={MINIMUM}')\n")
