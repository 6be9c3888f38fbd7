"""Memory tests for your own suite: keep a fixed leak fixed.

    from torchmemlint.testing import assert_no_memory_growth

    def test_training_step_keeps_no_memory():
        model, batch = ...
        assert_no_memory_growth(lambda: train_step(model, batch))

``assert_no_memory_growth`` calls the step a few times, meters what stays alive after each call
(the CUDA caching allocator on CUDA, every live tensor storage on the CPU, and the autograd graph
nodes that live tensors keep) and raises an ``AssertionError`` that says how many bytes each call
keeps, which names keep them and which lines created them. ``memory_budget`` does the same around
a loop of your own. ``docs/testing.md`` has a worked example; the pytest plugin
(``torchmemlint.pytest_plugin``) adds a ``memory_growth`` fixture and a ``no_memory_growth``
marker.

Importing this module imports nothing heavy: torch is imported when a budget starts.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

if TYPE_CHECKING:  # pragma: no cover
    from torchmemlint.verify.budget import MemoryBudget, MemoryGrowth

__all__ = ["MemoryGrowthError", "assert_no_memory_growth", "memory_budget"]


class MemoryGrowthError(AssertionError):
    """Memory grew: the message says how, where and why; ``.growth`` holds the figures (a
    ``MemoryGrowth``)."""

    def __init__(self, growth: "MemoryGrowth") -> None:
        super().__init__(str(growth))
        self.growth = growth


def _budget() -> Any:
    """The measuring module (it imports torch), or an ImportError that says what is missing."""
    try:
        from torchmemlint.verify import budget
    except ImportError as error:
        if error.name != "torch":
            raise
        raise ImportError("torchmemlint.testing needs PyTorch, which is not installed (pip install torch)") from None
    return budget


def memory_budget(per_iteration: int = 0, *, warmup: int = 2, device: Any = None) -> "MemoryBudget":
    """A context manager around a loop of your own; call ``m.step()`` at the start of every
    iteration::

        with memory_budget(per_iteration=0) as m:
            for batch in loader:
                m.step()
                train_step(model, batch)

    On leaving the block it raises an ``AssertionError`` (``MemoryGrowthError``) when, over the
    iterations after the first ``warmup``, any device kept more than ``per_iteration`` bytes per
    iteration (the median over the iterations) or autograd graph nodes piled up. ``device``:
    None meters every device used; ``"cpu"``, ``"cuda"`` or ``"cuda:1"`` only that one. After
    the block, ``m.result`` holds the figures (a ``MemoryGrowth``)."""
    MemoryBudget = _budget().MemoryBudget
    return MemoryBudget(per_iteration, warmup=warmup, device=device, what="the iterations")


def assert_no_memory_growth(step: Callable[[], Any], *, iterations: int = 8, warmup: int = 2,
                            device: Any = None, tolerance_bytes: int = 0) -> "MemoryGrowth":
    """Call ``step()`` ``warmup + iterations`` times and fail when memory grows: when, over the
    last ``iterations`` calls, any device keeps more than ``tolerance_bytes`` per call (the median
    over the calls) or autograd graph nodes pile up. Returns the figures (a ``MemoryGrowth``)
    when it passes."""
    __tracebackhide__ = True  # pytest shows the test's line, not this function's
    budget_module = _budget()
    MemoryBudget, step_roots = budget_module.MemoryBudget, budget_module.step_roots

    if not callable(step):
        raise TypeError(f"step must be a function of no arguments, not {type(step).__name__}")
    if not isinstance(iterations, int) or iterations < 2:
        raise ValueError(f"iterations must be a number >= 2, not {iterations!r}")
    function = getattr(step, "func", step)  # a functools.partial: the function's name
    name = getattr(function, "__qualname__", None) or type(step).__name__
    budget = MemoryBudget(tolerance_bytes, warmup=warmup, device=device, roots=step_roots(step),
                          what=f"{name}()")
    with budget:
        for _ in range(warmup + iterations):
            budget.step()
            step()
    result: Optional["MemoryGrowth"] = budget.result
    assert result is not None
    return result
