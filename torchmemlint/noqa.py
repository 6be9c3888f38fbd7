"""``check --add-noqa``: write ``# noqa: CODE`` on the line of every current finding, so that a
code base can adopt a rule now and pay its findings off later (ruff's ``--add-noqa``).

An existing ``# noqa: E501`` gains the code (``# noqa: E501, TML001``) instead of a second
comment; a line whose finding is already suppressed is not reported, so running it twice
changes nothing the second time. A line that ends inside a string (a comment there would be
text) is left alone and counted as skipped. Everything else stays byte for byte."""
from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from typing import Iterable

from torchmemlint.engine import NOQA

_LINE = re.compile(r"([^\r\n]*)(\r\n|\r|\n|)")


@dataclass
class NoqaResult:
    text: str
    added: int  # lines that got a comment or a code
    skipped: list[int]  # lines that end inside a string


def add_noqa(text: str, findings: Iterable[tuple[int, str]]) -> NoqaResult:
    """``text`` with ``# noqa`` codes added for ``findings`` (1-based line, code)."""
    codes_by_line: dict[int, list[str]] = {}
    for line, code in findings:
        codes = codes_by_line.setdefault(line, [])
        if code not in codes:
            codes.append(code)
    in_string = _lines_ending_in_strings(text)
    lines = [match.groups() for match in _LINE.finditer(text) if match.group(0)]
    added, skipped = 0, []
    for number, codes in sorted(codes_by_line.items()):
        if not 1 <= number <= len(lines):
            continue
        if number in in_string:
            skipped.append(number)
            continue
        body, ending = lines[number - 1]
        lines[number - 1] = (_with_codes(body, codes), ending)
        added += 1
    return NoqaResult("".join(body + ending for body, ending in lines), added, skipped)


def _with_codes(line: str, codes: list[str]) -> str:
    comment = _comment_start(line)
    match = NOQA.search(line, comment) if comment is not None else None
    if match is None:
        return f"{line.rstrip()}  # noqa: {', '.join(codes)}"
    existing = [c for c in re.split(r"[,\s]+", match.group("codes") or "") if c]
    merged = existing + [code for code in codes if code not in existing]
    rest = line[match.end():]
    separator = " " if rest and not rest[0].isspace() else ""
    return f"{line[:match.start()]}# noqa: {', '.join(merged)}{separator}{rest}"


def _comment_start(line: str) -> "int | None":
    """Where the line's comment starts (a ``#`` outside strings), or None."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(line + "\n").readline):
            if token.type == tokenize.COMMENT:
                return token.start[1]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return line.find("#") if "#" in line else None
    return None


def _lines_ending_in_strings(text: str) -> set[int]:
    """Lines whose end lies inside a multi-line string token."""
    inside: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.STRING or token.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
                inside.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return inside
