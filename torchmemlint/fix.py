"""Applying fixes: text edits in one pass, re-checked to a fixed point, never leaving code that
does not parse.

``fix_source`` is the whole safety net for one file's bytes: it decodes them the way the parser
does (PEP 263 cookie, BOM), applies the selected fixes round by round (a fix that overlaps an
earlier one waits for the next round), re-parses after every round, and encodes the result with
the file's own encoding. Everything outside the edits — comments, formatting, line endings, the
BOM — stays byte for byte, because edits replace only the text they cover.
"""
from __future__ import annotations

import difflib
import os
import re
import warnings
from dataclasses import dataclass, field
from typing import Sequence

from torchmemlint.diagnostics import Diagnostic, Edit, FileError, Fix, unexpected_error
from torchmemlint.engine import check_source, parse, recursion_headroom
from torchmemlint.rules.base import Rule

# Fixes of one rule can enable another's (``.detach()`` of a stored device tensor is then a
# TML004 finding); a handful of rounds reaches the fixed point, the bound stops a cycle.
MAX_ROUNDS = 10
# Lines as Python splits them: only \r\n, \r and \n end one (str.splitlines also splits at
# form feeds and other separators that are ordinary characters in source code).
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


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


def apply_fixes(text: str, fixes: Sequence[Fix]) -> tuple[str, list[Fix]]:
    """Apply the edits of ``fixes`` in one pass; returns the new text and the fixes applied, in
    the order given. A fix whose edits overlap an earlier one's is skipped whole (a later round
    of ``fix_source`` sees its diagnostic again, on the updated text)."""
    starts = _offsets(text)

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column

    chosen: list[tuple[int, int, Edit]] = []
    taken: list[tuple[int, int]] = []
    applied: list[Fix] = []
    for fix in fixes:
        spans = [(offset(e.line, e.column), offset(e.end_line, e.end_column), e) for e in fix.edits]
        if any(_overlaps(a, b, c, d) for a, b, _ in spans for c, d in taken):
            continue
        chosen.extend(spans)
        taken.extend((a, b) for a, b, _ in spans)
        applied.append(fix)
    for start, end, edit in sorted(chosen, key=lambda s: (s[0], s[1]), reverse=True):
        text = text[:start] + edit.content + text[end:]
    return text, applied


def _overlaps(a: int, b: int, c: int, d: int) -> bool:
    if a == b or c == d:  # insertions conflict only when at the same point or strictly inside
        return c < a < d or a < c < b or a == c
    return a < d and c < b


@dataclass
class FixResult:
    """The outcome of fixing one file's bytes.

    ``source`` is the fixed file (the input itself when nothing applied or ``error`` is set);
    ``applied`` the diagnostics whose fixes were applied, over all rounds; ``remaining`` what
    ``check`` reports on ``source``; ``errors`` why the file (or a rule on it) could not be
    checked or fixed; ``error`` why the fixes were not applied (the file is left as it was; it
    is also the last of ``errors``)."""

    source: bytes
    applied: list[Diagnostic] = field(default_factory=list)
    remaining: list[Diagnostic] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    error: str = ""
    encoding: str = "utf-8"


def fix_source(source: bytes, path: str, rules: Sequence[Rule], unsafe: bool = False) -> FixResult:
    """Apply the fixes of ``rules`` (the safe ones; the unsafe ones too with ``unsafe``) until
    nothing changes, at most ``MAX_ROUNDS`` rounds. If a round would produce code that does not
    parse or cannot be encoded, the file is left as it was and ``error`` says why; so it is,
    with one error saying what, when anything else goes wrong while fixing it."""
    try:
        with recursion_headroom():
            return _fix_source(source, path, rules, unsafe)
    except Exception as error:  # one file's failure must not stop the run
        failure = unexpected_error(path, error)
        return FixResult(source, errors=[failure], error=failure.message)


def _fix_source(source: bytes, path: str, rules: Sequence[Rule], unsafe: bool) -> FixResult:
    module, parse_error = parse(source, path)
    if module is None:
        return FixResult(source, errors=[parse_error] if parse_error else [],
                         error=parse_error.message if parse_error else "cannot parse")
    encoding = module.encoding
    # Not ``module.code``: LibCST drops a final lone "\r" (old Mac line endings).
    text = original_text = source.decode(encoding)
    current = source
    applied: list[Diagnostic] = []
    diagnostics, errors = check_source(current, path, rules)
    original_diagnostics, original_errors = diagnostics, errors
    for _ in range(MAX_ROUNDS):
        fixable = [d for d in diagnostics if d.fix is not None and (d.fix.safe or unsafe)]
        if not fixable:
            break
        new_text, used = apply_fixes(text, [d.fix for d in fixable])
        if new_text == text:
            break
        refusal = _refusal(new_text, encoding, path)
        if refusal:
            return _unchanged(source, path, original_diagnostics, original_errors,
                              f"a fix would {refusal}; file left unchanged", encoding)
        used_ids = {id(f) for f in used}
        applied.extend(d for d in fixable if id(d.fix) in used_ids)
        text, current = new_text, new_text.encode(encoding)
        diagnostics, errors = check_source(current, path, rules)
    if current != source and _compiles(original_text, path) and not _compiles(text, path):
        return _unchanged(source, path, original_diagnostics, original_errors,
                          "a fix would produce code Python rejects; file left unchanged", encoding)
    return FixResult(current, applied, diagnostics, errors, encoding=encoding)


def _unchanged(source: bytes, path: str, diagnostics: list[Diagnostic], errors: list[FileError],
               why: str, encoding: str) -> FixResult:
    """The file as it was, its diagnostics, and one more error saying why no fix applied."""
    return FixResult(source, remaining=diagnostics, errors=[*errors, FileError(path, why)], error=why,
                     encoding=encoding)


def _refusal(text: str, encoding: str, path: str) -> str:
    """Why ``text`` must not be written (it does not encode or parse), or ""."""
    try:
        encoded = text.encode(encoding)
    except UnicodeEncodeError as error:
        return f"add text the file's encoding ({encoding}) cannot hold: {error.reason}"
    module, error = parse(encoded, path)
    if module is None:
        return f"break the file ({error.message if error else 'it does not parse'})"
    return ""


def _compiles(text: str, path: str) -> bool:
    """LibCST's grammar accepts a few things CPython's compiler rejects (``"\\N{nonsense}"``,
    ``nonlocal`` at module level); ask CPython too. Only compiled, never run."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like
            compile(text, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def unified_diff(path: str, before: bytes, after: bytes, encoding: str = "utf-8") -> str:
    """A unified diff of one file's two versions, as ``git diff`` prints it (``a/``, ``b/``
    prefixes on a relative path, so ``git apply`` and ``patch -p1`` take it)."""
    old = _LINES.findall(before.decode(encoding, errors="replace"))
    new = _LINES.findall(after.decode(encoding, errors="replace"))
    relative = not os.path.isabs(path)
    fromfile, tofile = (f"a/{path}", f"b/{path}") if relative else (path, path)
    lines = []
    for line in difflib.unified_diff(old, new, fromfile=fromfile, tofile=tofile):
        lines.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(lines)
