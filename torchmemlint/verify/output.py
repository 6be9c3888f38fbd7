"""``verify`` output: a table for people, a JSON array for programs (``docs/verification.md``,
"JSON format")."""
from __future__ import annotations

import json
import textwrap
from typing import IO, Optional, Sequence

from torchmemlint.verify.verdict import VERDICTS
from torchmemlint.verify.verifier import VerifyResult

_HEADERS = ("finding", "verdict", "B/iteration", "peak excess B", "iterations")
_RIGHT_ALIGNED = {2, 3, 4}
_WIDTH = 100


def _bytes(value: Optional[int]) -> str:
    return "-" if value is None else f"{value:,}"


class ProgressLine:
    """Progress on a terminal: one line, rewritten in place; elsewhere (a CI log), one line per
    message."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._interactive = stream.isatty()
        self._width = 0

    def __call__(self, message: str) -> None:
        if self._interactive:
            self._stream.write("\r" + message.ljust(self._width))
            self._width = len(message)
        else:
            self._stream.write(message + "\n")
        self._stream.flush()

    def close(self) -> None:
        if self._interactive and self._width:
            self._stream.write("\r" + " " * self._width + "\r")
            self._stream.flush()


def write_json(results: Sequence[VerifyResult], stream: IO[str]) -> None:
    json.dump([result.to_json() for result in results], stream, indent=2)
    stream.write("\n")


def write_table(results: Sequence[VerifyResult], stream: IO[str]) -> None:
    """One row per finding, its explanation indented below it, then a count per verdict."""
    rows = []
    for result in results:
        d, j = result.diagnostic, result.judgement
        rows.append((f"{d.path}:{d.line} {d.code}", result.verdict,
                     _bytes(j.bytes_per_iteration if j else None), _bytes(j.peak_excess_bytes if j else None),
                     str(len(j.measured)) if j else "-"))
    widths = [max(len(row[i]) for row in (_HEADERS, *rows)) for i in range(len(_HEADERS))]

    def line(row: Sequence[str]) -> str:
        cells = [cell.rjust(widths[i]) if i in _RIGHT_ALIGNED else cell.ljust(widths[i]) for i, cell in enumerate(row)]
        return "  ".join(cells).rstrip() + "\n"

    stream.write(line(_HEADERS))
    for row, result in zip(rows, results):
        stream.write(line(row))
        stream.write(textwrap.fill(result.explanation, width=_WIDTH, initial_indent="    ",
                                   subsequent_indent="    ") + "\n")
        if result.twin_path:
            origin = "shipped" if result.twin_origin == "shipped" else "--twin"
            stream.write(f"    twin: {result.twin_path} ({origin})\n")
    meters = sorted({f"{r.meter} meter on {r.device}" for r in results if r.device})
    counts = [f"{n} {verdict}" for verdict in VERDICTS if (n := sum(r.verdict == verdict for r in results))]
    stream.write(f"\n{len(results)} finding(s): {', '.join(counts) or 'none'}"
                 + (f" ({'; '.join(meters)})" if meters else "") + "\n")
