"""Progress of a long ``check`` on a terminal: ``checked 120/600 files`` on one line of stderr,
rewritten in place, shown only once the run has taken ``DELAY_S`` (a warm, cached run never
shows it) and erased at the end, so that the terminal holds the findings and the summary only.

Plain text and carriage returns, no colour and no escape sequences; findings written to stdout
meanwhile (the same terminal, usually) are preceded by erasing the line, which is then drawn
again below them. Nothing is drawn where ``enabled`` is false: the command line turns it off
when stderr is no terminal, the terminal is dumb, or ``-q``/``-s`` asked for quiet."""
from __future__ import annotations

import os
import time
from typing import Callable, TextIO

DELAY_S = 1.0  # runs shorter than this show nothing
INTERVAL_S = 0.1  # redraw at most this often


def progress_wanted(stream: TextIO, quiet: bool) -> bool:
    """Whether a progress line belongs on ``stream``: a terminal that is not dumb, and no quiet
    option (``NO_COLOR`` needs nothing: the line has no colour)."""
    return not quiet and stream.isatty() and os.environ.get("TERM") != "dumb"


class FileProgress:
    def __init__(self, stream: TextIO, total: int, enabled: bool,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._stream = stream
        self._total = total
        self._enabled = enabled and total > 1
        self._clock = clock
        self._start = clock()
        self._drawn_at = 0.0
        self._width = 0  # of the line on the screen now (0: none)
        self.done = 0

    def advance(self) -> None:
        """One more file is done."""
        self.done += 1
        if not self._enabled or self.done >= self._total:
            return
        now = self._clock()
        if now - self._start >= DELAY_S and now - self._drawn_at >= INTERVAL_S:
            self._drawn_at = now
            self._draw()

    def _draw(self) -> None:
        line = f"checked {self.done}/{self._total} files"
        self._stream.write("\r" + line.ljust(self._width))
        self._width = len(line)
        self._stream.flush()

    @property
    def showing(self) -> bool:
        return bool(self._width)

    def erase(self) -> None:
        """Take the line off the screen (before other output, and at the end)."""
        if self._width:
            self._stream.write("\r" + " " * self._width + "\r")
            self._stream.flush()
            self._width = 0

    def redraw(self) -> None:
        """Put the line back after other output, if it was shown before."""
        if self._enabled and self._drawn_at and not self._width and self.done < self._total:
            self._draw()
