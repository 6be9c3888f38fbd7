"""``--plot out.png``: live memory per iteration, original against twin, one panel per finding."""
from __future__ import annotations

import math
from typing import Sequence

from torchmemlint.verify.verifier import VerifyResult

_COLUMNS = 2
_UNITS = ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"), (1, "B"))


def _unit(values: Sequence[int]) -> tuple[int, str]:
    largest = max((abs(v) for v in values), default=0)
    return next((scale, name) for scale, name in _UNITS if largest >= 10 * scale or scale == 1)


def write_plot(results: Sequence[VerifyResult], path: str) -> int:
    """Write the PNG; returns the number of panels (findings with measurements)."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed, whatever the environment says
    from matplotlib import pyplot

    measured = [r for r in results if r.original is not None and r.original.live_bytes]
    panels = max(len(measured), 1)
    columns = min(_COLUMNS, panels)
    rows = math.ceil(panels / columns)
    figure, axes = pyplot.subplots(rows, columns, figsize=(6.4 * columns, 3.6 * rows), squeeze=False)
    for index, ax in enumerate(axes.flat):
        if index >= len(measured):
            ax.axis("off")
            if not measured:
                ax.text(0.5, 0.5, "no finding was replayed", ha="center", va="center")
            continue
        _panel(ax, measured[index])
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
    return len(measured)


def _panel(ax, result: VerifyResult) -> None:
    runs = [("original", result.original, "tab:red")]
    if result.twin is not None and result.twin.live_bytes:
        runs.append(("twin (with the fix)", result.twin, "tab:green"))
    # The warm-up iterations pay one-off costs (on CUDA the context and cuBLAS workspaces, tens of
    # MiB) that would flatten a few KiB of growth per iteration into an invisible line: draw the
    # measured iterations only, above the lowest memory either run had when measuring began.
    measured = result.judgement.measured if result.judgement and result.judgement.measured else []
    first = measured[0] if measured else 0
    first = min(first, *(len(run.live_bytes) - 1 for _, run, _ in runs))
    baseline = min(run.live_bytes[first] for _, run, _ in runs)
    shown = [v - baseline for _, run, _ in runs for v in run.live_bytes[first:] + run.peak_bytes[max(first, 1):]]
    scale, unit = _unit(shown)
    for label, run, color in runs:
        steps = range(first, len(run.live_bytes))
        ax.plot(steps, [(v - baseline) / scale for v in run.live_bytes[first:]], marker="o", color=color,
                label=f"{label}: live")
        peak_steps = range(max(first, 1), len(run.peak_bytes))
        ax.plot(peak_steps, [(run.peak_bytes[i] - baseline) / scale for i in peak_steps], linestyle=":",
                color=color, label=f"{label}: peak")
    d = result.diagnostic
    ax.set_title(f"{d.path}:{d.line} {d.code} — {result.verdict}", fontsize=9)
    ax.set_xlabel("measured iteration (after the warm-up)")
    ax.set_ylabel(f"{result.meter} memory, {unit}\n(above iteration {first})", fontsize=8)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
