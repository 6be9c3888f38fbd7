"""Text output, as ruff writes it: ``path:line:col: CODE [*] message``, one line per finding,
columns 1-based, ``[*]`` where ``torchmemlint fix`` would fix the finding (``concise``, the
default). ``full`` (``--show-source``) adds the source lines around the finding with a caret
under it, and the fix as a help line. Colour only when asked (``--color``; the command line
decides from the terminal and ``NO_COLOR``).

Without ``[*]`` a line is the one ``flake8 --select=TML`` prints (in a notebook
``path:cell N:line:col: ...``, as ruff writes it)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Union

from torchmemlint.diagnostics import Diagnostic, FileError
from torchmemlint.report.base import Reporter, Tally, is_applicable
from torchmemlint.report.source import SourceLines

if TYPE_CHECKING:
    from torchmemlint.api import FileResult

FIX_MARK = "[*]"
CONTEXT_LINES = 2  # source lines shown before and after the finding's first line (as ruff)
TAB_WIDTH = 4


class _Style:
    """ANSI styles, or none."""

    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, *codes: int) -> str:
        if not self.color or not text:
            return text
        return f"\x1b[{';'.join(map(str, codes))}m{text}\x1b[0m"

    def path(self, text: str) -> str:
        return self(text, 1)

    def separator(self, text: str) -> str:
        return self(text, 36)

    def code(self, text: str) -> str:
        return self(text, 1, 31)

    def mark(self, text: str) -> str:
        return self(text, 36)

    def gutter(self, text: str) -> str:
        return self(text, 1, 34)

    def caret(self, text: str) -> str:
        return self(text, 1, 31)


def format_line(finding: Union[Diagnostic, FileError], fixable: bool = False, color: bool = False) -> str:
    style = _Style(color)
    colon = style.separator(":")
    cell = f"cell {finding.cell}{colon}" if finding.cell is not None else ""  # as ruff writes notebook positions
    mark = f" {style.mark(FIX_MARK)}" if fixable else ""
    return (f"{style.path(finding.path)}{colon}{cell}{finding.line}{colon}{finding.column + 1}{colon} "
            f"{style.code(finding.code)}{mark} {finding.message}")


class TextReporter(Reporter):
    def add(self, result: "FileResult") -> None:
        lines: Optional[SourceLines] = None
        for finding in result.findings:
            fixable = is_applicable(finding, self.options.unsafe_fixes)
            print(format_line(finding, fixable, self.options.color), file=self.stream)
            if self.options.show_source:
                lines = lines or SourceLines(result.path, self.options.read(result.path))
                snippet = format_snippet(finding, lines.of(finding.cell), _Style(self.options.color))
                print(snippet, file=self.stream)


def format_snippet(finding: Union[Diagnostic, FileError], lines: list[str], style: _Style) -> str:
    """The lines around the finding, numbered, a caret under the finding's span, the fix as a
    help line, then a blank line (ruff's ``full`` layout)::

           |
        10 |         optimizer.step()
        11 |         losses.append(loss)
           |         ^^^^^^^^^^^^^^^^^^^ TML001
        12 |     return losses
           |
           = help: Store `loss.item()` instead
    """
    parts: list[str] = []
    width = len(str(finding.line + CONTEXT_LINES))
    if 1 <= finding.line <= len(lines):
        first = max(1, finding.line - CONTEXT_LINES)
        last = min(len(lines), finding.line + CONTEXT_LINES)
        while last > finding.line and not lines[last - 1].strip():
            last -= 1  # no trailing blank context (the file's final line break)
        width = len(str(last))
        bar = style.gutter(f"{'':>{width}} |")
        parts.append(bar)
        for number in range(first, last + 1):
            text = lines[number - 1].expandtabs(TAB_WIDTH)
            parts.append(f"{style.gutter(f'{number:>{width}} |')} {text}".rstrip())
            if number == finding.line:
                parts.append(f"{bar} {_caret(finding, lines[number - 1], style)}")
        parts.append(bar)
    fix = getattr(finding, "fix", None)
    if fix is not None:
        parts.append(f"{style.gutter(' ' * width + ' =')} help: {fix.description}"
                     + ("" if fix.safe else " (unsafe fix)"))
    return "\n".join(parts) + "\n"


def _caret(finding: Union[Diagnostic, FileError], line: str, style: _Style) -> str:
    """``^`` under the finding's span on its first line (to the line's end if it goes on)."""
    start = min(finding.column, len(line))
    end_line = getattr(finding, "end_line", 0) or finding.line
    end = finding.end_column if end_line == finding.line else len(line.rstrip())
    end = max(min(end, len(line)), start + 1)
    indent = len(line[:start].expandtabs(TAB_WIDTH))
    width = len(line[:end].expandtabs(TAB_WIDTH)) - indent
    return " " * indent + style.caret("^" * max(width, 1) + f" {finding.code}")


def format_statistics(tally: Tally) -> str:
    """One line per code, most frequent first: count, code, ``[*]`` if ``fix`` would fix some
    of them (``[ ]`` if none), name (ruff's ``--statistics``)."""
    rows = sorted(tally.by_code.items(), key=lambda item: (-item[1], item[0]))
    width = max((len(str(count)) for _, count in rows), default=1)
    return "\n".join(f"{count:>{width}}  {code}  {FIX_MARK if tally.fixable_by_code[code] else '[ ]'} "
                     f"{tally.names[code]}" for code, count in rows)


def format_summary(tally: Tally) -> str:
    if not tally.total:
        return f"All checks passed ({plural(tally.files, 'file')} checked)."
    return f"Found {plural(tally.total, 'error')} in {plural(tally.files, 'file')} checked."


def format_fixable(tally: Tally) -> Optional[str]:
    """``[*] 2 fixable with `torchmemlint fix` (1 more with `--unsafe-fixes`).``, or None when
    ``fix`` can do nothing."""
    if not tally.fixable and not tally.unsafe_only:
        return None
    if not tally.fixable:
        return f"{FIX_MARK} {tally.unsafe_only} fixable with `torchmemlint fix --unsafe-fixes`."
    command = "`torchmemlint fix --unsafe-fixes`" if tally.unsafe_fixes else "`torchmemlint fix`"
    line = f"{FIX_MARK} {tally.fixable} fixable with {command}"
    if tally.unsafe_only:
        line += f" ({tally.unsafe_only} more with `--unsafe-fixes`)"
    return line + "."


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
