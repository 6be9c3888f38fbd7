"""Applying fixes: text edits in one pass, re-checked to a fixed point, never leaving code that
does not parse."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence


from torchmemlint.diagnostics import Diagnostic, Edit, Fix
from torchmemlint.engine import check_source, parse
from torchmemlint.rules.base import Rule

MAX_ROUNDS = 10


def _offsets(text: str) -> list[int]:
    """Character offset of the start of each line (1-based line n starts at offsets[n - 1])."""
    starts = [0]
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\r":
            if i + 1 < n and text[i + 1] == "\n":
                i += 1
            starts.append(i + 1)
        elif ch == "\n":
            starts.append(i + 1)
        i += 1
    return starts


def apply_fixes(text: str, fixes: Iterable[Fix]) -> str:
    """Apply the edits of ``fixes``; a fix whose edits overlap an earlier-applied one is skipped
    (the next round of ``fix_source`` picks it up again)."""
    starts = _offsets(text)

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column

    chosen: list[tuple[int, int, Edit]] = []
    taken: list[tuple[int, int]] = []
    for fix in fixes:
        spans = [(offset(e.line, e.column), offset(e.end_line, e.end_column), e) for e in fix.edits]
        if any(_overlaps(a, b, c, d) for a, b, _ in spans for c, d in taken):
            continue
        chosen.extend(spans)
        taken.extend((a, b) for a, b, _ in spans)
    for start, end, edit in sorted(chosen, key=lambda s: (s[0], s[1]), reverse=True):
        text = text[:start] + edit.content + text[end:]
    return text


def _overlaps(a: int, b: int, c: int, d: int) -> bool:
    if a == b or c == d:  # insertions conflict only when at the same point or strictly inside
        return c < a < d or a < c < b or a == c
    return a < d and c < b


@dataclass
class FixResult:
    source: bytes
    applied: list[Diagnostic] = field(default_factory=list)
    error: str = ""


def fix_source(source: bytes, path: str, rules: Sequence[Rule], unsafe: bool = False) -> FixResult:
    """Apply the applicable fixes of ``rules`` until nothing changes (bounded). If a round would
    produce code that does not parse, the file is left as it was and ``error`` says why."""
    module, error = parse(source, path)
    if module is None:
        return FixResult(source, error=error.message if error else "cannot parse")
    encoding = module.encoding
    current = source
    applied: list[Diagnostic] = []
    for _ in range(MAX_ROUNDS):
        diagnostics, _errors = check_source(current, path, rules)
        fixable = [d for d in diagnostics if d.fix is not None and (d.fix.safe or unsafe)]
        if not fixable:
            break
        # The bytes decoded, not LibCST's regenerated code: it drops the last line break of a
        # file with old-Mac ``\r`` line endings.
        text = current.decode(encoding)
        new_text = apply_fixes(text, (d.fix for d in fixable))
        if new_text == text:
            break
        new_source = new_text.encode(encoding)
        new_module, parse_error = parse(new_source, path)
        if new_module is None:
            return FixResult(source, error=f"a fix would break the file ({parse_error.message}); left unchanged")
        applied.extend(fixable)
        current = new_source
    return FixResult(current, applied)
