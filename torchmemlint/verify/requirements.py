"""What ``verify`` needs installed, checked before any replay starts, so that a missing or too
old PyTorch (or matplotlib for ``--plot``) is one clear line instead of a failure halfway.

Nothing here imports torch or matplotlib: the installed distributions' metadata answers."""
from __future__ import annotations

import importlib.util
import re
from importlib import metadata
from typing import Optional

# torch.cuda.memory_stats keys, torch.utils._python_dispatch and weakref-able tensors as the
# meters use them are all in 2.1; pyproject's `verify` extra says the same (`torch>=2.1`).
MINIMUM_TORCH = (2, 1)
INSTALL_HINT = "pip install 'torchmemlint[verify]'"


def release(version: str) -> tuple[int, ...]:
    """The leading release numbers of a version string: ``2.13.0+cu126`` -> ``(2, 13, 0)``."""
    match = re.match(r"\d+(?:\.\d+)*", version.strip())
    return tuple(int(part) for part in match.group(0).split(".")) if match else ()


def torch_problem() -> Optional[str]:
    """Why the installed PyTorch cannot run ``verify``, or None."""
    if importlib.util.find_spec("torch") is None:
        return f"verify needs PyTorch, which is not installed here ({INSTALL_HINT})"
    try:
        version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None  # a source checkout on the path: no metadata to judge by, let it run
    if release(version) < MINIMUM_TORCH:
        minimum = ".".join(map(str, MINIMUM_TORCH))
        return (f"verify needs PyTorch {minimum} or newer, but torch {version} is installed "
                f"(pip install 'torch>={minimum}')")
    return None


def plot_problem() -> Optional[str]:
    """Why ``--plot`` cannot draw, or None."""
    if importlib.util.find_spec("matplotlib") is None:
        return f"--plot needs matplotlib, which is not installed here (pip install matplotlib, or {INSTALL_HINT})"
    return None
