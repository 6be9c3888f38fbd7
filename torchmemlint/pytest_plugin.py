"""The pytest plugin (entry point ``pytest11``): memory tests without boilerplate.

- ``@pytest.mark.no_memory_growth(iterations=8, warmup=2, device=None, tolerance_bytes=0)`` on a
  test function that runs one training (or evaluation) step: its fixtures are set up once, and
  its body is called ``warmup + iterations`` times under ``assert_no_memory_growth``.
- the ``memory_growth`` fixture: ``memory_growth(step, **options)`` is
  ``assert_no_memory_growth``; ``memory_growth.budget(per_iteration=0)`` is ``memory_budget``.

Without PyTorch both skip the test with a message saying so. Loading the plugin imports neither
torch nor the meters: pytest loads it in every project where torchmemlint is installed.
"""
from __future__ import annotations

import functools
import importlib.util
import inspect
from typing import Any, Callable

import pytest

MARKER = "no_memory_growth"
_OPTIONS = {"iterations", "warmup", "device", "tolerance_bytes"}
_NO_TORCH = "torchmemlint memory tests need PyTorch, which is not installed (pip install torch)"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(iterations=8, warmup=2, device=None, tolerance_bytes=0): call the test's body "
                   "warmup + iterations times and fail when the memory it keeps grows (torchmemlint)")


def _skip_without_torch() -> None:
    if importlib.util.find_spec("torch") is None:
        pytest.skip(_NO_TORCH)
    try:
        import torch  # noqa: F401
    except ImportError as error:
        pytest.skip(f"{_NO_TORCH} ({error})")


class MemoryGrowthChecker:
    """The ``memory_growth`` fixture's value."""

    def __call__(self, step: Callable[[], Any], **options: Any) -> Any:
        __tracebackhide__ = True
        from torchmemlint.testing import assert_no_memory_growth

        return assert_no_memory_growth(step, **options)

    def budget(self, per_iteration: int = 0, **options: Any) -> Any:
        from torchmemlint.testing import memory_budget

        return memory_budget(per_iteration, **options)


@pytest.fixture
def memory_growth() -> MemoryGrowthChecker:
    """``memory_growth(step)`` fails the test when ``step()`` keeps more memory at every call
    (``torchmemlint.testing.assert_no_memory_growth``)."""
    _skip_without_torch()
    return MemoryGrowthChecker()


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Any:
    marker = pyfuncitem.get_closest_marker(MARKER)
    if marker is None:
        return None
    unknown = sorted(set(marker.kwargs) - _OPTIONS)
    if marker.args or unknown:
        raise pytest.UsageError(f"{pyfuncitem.nodeid}: @pytest.mark.{MARKER} takes the keyword arguments "
                                f"{', '.join(sorted(_OPTIONS))}" + (f", not {', '.join(unknown)}" if unknown else ""))
    function = pyfuncitem.obj
    if inspect.iscoroutinefunction(function):
        raise pytest.UsageError(f"{pyfuncitem.nodeid}: @pytest.mark.{MARKER} does not run async tests")
    _skip_without_torch()
    from torchmemlint.testing import assert_no_memory_growth

    __tracebackhide__ = True
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    # A partial, so that the fixtures and the names the test uses are the roots of the
    # retention walk (``budget.step_roots``).
    assert_no_memory_growth(functools.partial(function, **arguments), **marker.kwargs)
    return True
