"""Applying fixes: text edits in one pass, re-checked to a fixed point, never leaving code that
does not parse.

``fix_source`` is the whole safety net for one file's bytes: it decodes them the way the parser
does (PEP 263 cookie, BOM), applies the selected fixes round by round (a fix that overlaps an
earlier one waits for the next round), re-parses after every round, and encodes the result with
the file's own encoding. Everything outside the edits — comments, formatting, line endings, the
BOM — stays byte for byte, because edits replace only the text they cover.
"""
from __future__ import annotations

import ast
import copy
import dataclasses
import difflib
import io
import os
import re
import tokenize
import warnings
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from torchmemlint.diagnostics import Diagnostic, Edit, FileError, Fix, unexpected_error
from torchmemlint.engine import check_source, parse, recursion_headroom
from torchmemlint.notebooks import BOM, EditableCells, RawNotebook, is_notebook, place_in_cells, read_notebook
from torchmemlint.rules.base import Rule
from torchmemlint.semantics.prescreen import first_line, scan

# Fixes of one rule can enable another's (``.detach()`` of a stored device tensor is then a
# TML004 finding); a handful of rounds reaches the fixed point, the bound stops a cycle.
MAX_ROUNDS = 10
# Lines as Python splits them: only \r\n, \r and \n end one (str.splitlines also splits at
# form feeds and other separators that are ordinary characters in source code).
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


_LINE_END = re.compile(r"\r\n|\r|\n")


def _offsets(text: str) -> list[int]:
    """Character offset of the start of each line (1-based line n starts at offsets[n - 1])."""
    return [0, *(match.end() for match in _LINE_END.finditer(text))]


def apply_fixes(text: str, fixes: Sequence[Fix]) -> tuple[str, list[Fix]]:
    """Apply the edits of ``fixes`` in one pass; returns the new text and the fixes applied, in
    the order given. A fix whose edits overlap an earlier one's is skipped whole (a later round
    of ``fix_source`` sees its diagnostic again, on the updated text); so is an unsafe one
    (``_placed``), for good."""
    new_text, placed, _ = _apply(text, fixes)
    return new_text, [p.fix for p in placed]


@dataclass
class _Placed:
    """A fix applied in a round: where its edits were in the old text and are in the new one
    (character offsets)."""

    fix: Fix
    old_spans: list[tuple[int, int]]
    new_spans: list[tuple[int, int]] = field(default_factory=list)


def _apply(text: str, fixes: Sequence[Fix]) -> tuple[str, list[_Placed], list[tuple[Fix, str]]]:
    """``apply_fixes``, with where each applied fix's edits landed, and the fixes refused as
    unsafe with why: an edit whose span no longer holds the code it was made for (the positions
    it came from are wrong), and edits of one fix that overlap or repeat each other."""
    starts = _offsets(text)

    def offset(line: int, column: int) -> Optional[int]:
        if not 1 <= line <= len(starts):
            return None
        at = starts[line - 1] + column
        return at if at <= (starts[line] if line < len(starts) else len(text)) else None

    chosen: list[tuple[int, int, Edit, _Placed]] = []
    taken: list[tuple[int, int]] = []
    placed: list[_Placed] = []
    refused: list[tuple[Fix, str]] = []
    for fix in fixes:
        spans = [(offset(e.line, e.column), offset(e.end_line, e.end_column), e) for e in fix.edits]
        if any(a is None or b is None or b < a for a, b, _ in spans):
            refused.append((fix, "an edit lies outside the file"))
            continue
        if any(e.original is not None and text[a:b] != e.original for a, b, e in spans):
            refused.append((fix, "an edit's span no longer holds the code it replaces"))
            continue
        if any(_overlaps(a, b, c, d) for i, (a, b, _) in enumerate(spans) for c, d, _ in spans[:i]):
            refused.append((fix, "its edits overlap or repeat each other"))
            continue
        if any(_overlaps(a, b, c, d) for a, b, _ in spans for c, d in taken):
            continue
        entry = _Placed(fix, [(a, b) for a, b, _ in spans])
        chosen.extend((a, b, e, entry) for a, b, e in spans)
        taken.extend((a, b) for a, b, _ in spans)
        placed.append(entry)
    pieces, previous, shift = [], 0, 0
    for start, end, edit, entry in sorted(chosen, key=lambda s: (s[0], s[1])):
        pieces.append(text[previous:start])
        pieces.append(edit.content)
        entry.new_spans.append((start + shift, start + shift + len(edit.content)))
        shift += len(edit.content) - (end - start)
        previous = end
    pieces.append(text[previous:])
    return "".join(pieces), placed, refused


def _overlaps(a: int, b: int, c: int, d: int) -> bool:
    if a == b or c == d:  # insertions conflict only when at the same point or strictly inside
        return c < a < d or a < c < b or a == c
    return a < d and c < b


@dataclass
class FixResult:
    """The outcome of fixing one file's bytes.

    ``source`` is the fixed file (the input itself when nothing applied or ``error`` is set);
    ``applied`` the diagnostics whose fixes were applied, over all rounds (positioned on the
    input); ``remaining`` what ``check`` reports on ``source`` (``unfixed``: the same, positioned
    on the input); ``errors`` why the file (or a rule on it) could not be
    checked or fixed; ``error`` why the fixes were not applied (the file is left as it was; it
    is also the last of ``errors``)."""

    source: bytes
    applied: list[Diagnostic] = field(default_factory=list)
    remaining: list[Diagnostic] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    error: str = ""
    encoding: str = "utf-8"
    unfixed: list[Diagnostic] = field(default_factory=list)  # ``remaining``, positioned on the input


# Why a fixed text cannot be written where it goes ("" when it can): a notebook's cells.
Guard = Callable[[str], str]


def fix_source(source: bytes, path: str, rules: Sequence[Rule], unsafe: bool = False,
               guard: Optional[Guard] = None) -> FixResult:
    """Apply the fixes of ``rules`` (the safe ones; the unsafe ones too with ``unsafe``) until
    nothing changes, at most ``MAX_ROUNDS`` rounds. If a round would produce code that does not
    parse or cannot be encoded, the file is left as it was and ``error`` says why; so it is,
    with one error saying what, when anything else goes wrong while fixing it. ``guard`` is one
    more part of the safety net: a fix whose text it refuses is skipped as unsafe."""
    try:
        with recursion_headroom():
            return _fix_source(source, path, rules, unsafe, guard)
    except Exception as error:  # one file's failure must not stop the run
        failure = unexpected_error(path, error)
        return FixResult(source, errors=[failure], error=failure.message)


def _fix_source(source: bytes, path: str, rules: Sequence[Rule], unsafe: bool, guard: Optional[Guard]) -> FixResult:
    # Python's own parser first (a syntax error, an undecodable or too deep file ends here, as in
    # ``check``); then the encoding LibCST decodes with (PEP 263 cookie, BOM), by the same rule.
    facts = scan(source, path)
    if isinstance(facts, FileError):
        return FixResult(source, errors=[facts], error=facts.message)
    encoding = tokenize.detect_encoding(io.BytesIO(source).readline)[0]
    # Not ``module.code``: LibCST drops a final lone "\r" (old Mac line endings).
    text = original_text = source.decode(encoding)
    current = source
    applied: list[Diagnostic] = []
    rounds: list[list[Edit]] = []  # the edits each round applied
    diagnostics, errors = check_source(current, path, rules)
    original_diagnostics, original_errors = diagnostics, errors
    skipped: dict[tuple, tuple[Diagnostic, str]] = {}  # fixes dropped as unsafe, by finding
    for _ in range(MAX_ROUNDS):
        fixable = [d for d in diagnostics if d.fix is not None and (d.fix.safe or unsafe) and _key(d) not in skipped]
        if not fixable:
            break
        by_fix = {id(d.fix): d for d in fixable}
        new_text, placed, refused = _apply(text, [d.fix for d in fixable])
        for fix, why in refused:
            skipped[_key(by_fix[id(fix)])] = by_fix[id(fix)], why
        if new_text == text:
            if refused:
                continue
            break
        refusal = _refusal(new_text, encoding, path)
        if refusal:
            return _unchanged(source, path, original_diagnostics, original_errors,
                              f"a fix would {refusal}; file left unchanged", encoding)
        unsafe_fixes = _changed_elsewhere(text, new_text, placed, path) or _guarded(text, new_text, placed, guard)
        new_current = new_text.encode(encoding)
        new_diagnostics, new_errors = ([], []) if unsafe_fixes else check_source(new_current, path, rules)
        unsafe_fixes = unsafe_fixes or _not_converging(text, new_text, placed, by_fix, diagnostics, new_diagnostics)
        if unsafe_fixes:  # this round again, without them
            for fix, why in unsafe_fixes:
                skipped[_key(by_fix[id(fix)])] = by_fix[id(fix)], why
            continue
        # Positions of later rounds refer to the text earlier rounds made: report them on the
        # file as it was, where ``--diff`` and the user read them.
        applied.extend(_on_original(by_fix[id(p.fix)], rounds) for p in placed)
        rounds.append([edit for p in placed for edit in p.fix.edits])
        skipped.clear()  # (on the new text, a dropped fix is tried again: it may have been the round)
        text, current = new_text, new_current
        diagnostics, errors = new_diagnostics, new_errors
    if current != source and _compiles(original_text, path) and not _compiles(text, path):
        return _unchanged(source, path, original_diagnostics, original_errors,
                          "a fix would produce code Python rejects; file left unchanged", encoding)
    errors = [*errors, *(FileError(path, f"{d.code} fix skipped: unsafe edit ({why})", d.line, d.column)
                         for d, why in skipped.values())]
    return FixResult(current, applied, diagnostics, errors, encoding=encoding,
                     unfixed=[_on_original(d, rounds) for d in diagnostics])


def _on_original(diagnostic: Diagnostic, rounds: list[list[Edit]]) -> Diagnostic:
    """``diagnostic``, found on the text after ``rounds`` of edits, with its lines (and its fix's)
    moved back to the original text: each earlier edit that ends above a line shifted it by the
    lines it added. Columns stay as they are."""
    if not rounds:
        return diagnostic

    def back(line: int) -> int:
        for edits in reversed(rounds):
            line -= sum(len(_offsets(e.content)) - 1 - (e.end_line - e.line) for e in edits if e.end_line < line)
        return line

    fix = diagnostic.fix
    if fix is not None:
        fix = dataclasses.replace(fix, edits=tuple(
            dataclasses.replace(e, line=back(e.line), end_line=back(e.end_line)) for e in fix.edits))
    return dataclasses.replace(diagnostic, line=back(diagnostic.line),
                               end_line=back(diagnostic.end_line) if diagnostic.end_line else 0, fix=fix)


def _key(diagnostic: Diagnostic) -> tuple:
    return diagnostic.code, diagnostic.line, diagnostic.column, diagnostic.end_line, diagnostic.end_column


def _changed_elsewhere(before: str, after: str, placed: list[_Placed], path: str) -> list[tuple[Fix, str]]:
    """The fixes of a round that change code they do not cover (Black's safety net, on the
    statements outside the edits): with none, the two versions' statements outside the edited
    lines are the same syntax trees, in the same order. When the round as a whole fails, each
    fix is tried alone to find the culprits (all of them if none fails alone)."""
    if _same_outside(before, after, [p.old_spans for p in placed], [p.new_spans for p in placed]) \
            and not _rebinds_torch(before, placed):
        return []
    culprits = []
    for entry in placed:
        alone, [single], _ = _apply(before, [entry.fix])
        if _rebinds_torch(before, [single]):
            culprits.append((entry.fix, "it names torch where torch is another module"))
        elif not _same_outside(before, alone, [single.old_spans], [single.new_spans]):
            culprits.append((entry.fix, "it changes code outside the finding"))
    return culprits or [(entry.fix, "the fixes together change code outside their findings") for entry in placed]


def _same_outside(before: str, after: str, old_spans: list[list[tuple[int, int]]],
                  new_spans: list[list[tuple[int, int]]]) -> bool:
    old_lines = _span_lines(_offsets(before), [s for spans in old_spans for s in spans])
    new_lines = _span_lines(_offsets(after), [s for spans in new_spans for s in spans])
    try:
        return _statements_outside(ast.parse(before), old_lines) == _statements_outside(ast.parse(after), new_lines)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def _span_lines(starts: list[int], spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The first and last line each span touches (``starts``: the text's ``_offsets``); the
    line it ends on counts even where it ends at its start (the same edit may end at a line's
    start in one text and after its indentation in the other)."""
    return [(bisect_right(starts, a), bisect_right(starts, b)) for a, b in spans]


_BODIES = ("body", "orelse", "handlers", "finalbody", "cases")


def _statements_outside(tree: ast.AST, edited: list[tuple[int, int]]) -> list[str]:
    """Every statement of ``tree`` whose lines (a compound statement's: its header's) no edit
    touches, as its syntax tree without positions (a compound one without its body, and its
    decorators as items of their own), in order."""
    found = []
    pending = [tree]
    while pending:
        node = pending.pop()
        children = [child for name in _BODIES for child in getattr(node, name, ())]
        if isinstance(node, ast.stmt):
            first = node.lineno
            last = node.end_lineno or node.lineno
            decorators = getattr(node, "decorator_list", ())
            if children or decorators:
                # Decorators stand alone (a fix may add one to a function it leaves alone).
                for decorator in decorators:
                    if not any(a <= decorator.end_lineno and decorator.lineno <= b for a, b in edited):
                        found.append("@" + ast.dump(decorator, include_attributes=False))
                header = copy.copy(node)
                for name in (*_BODIES, "decorator_list"):
                    if hasattr(header, name):
                        setattr(header, name, [])
                # (up to its first child's first decorator: one a fix adds to a method is no part
                # of its class's header)
                last = max(first, min(first_line(c) for c in children if hasattr(c, "lineno")) - 1) \
                    if any(hasattr(c, "lineno") for c in children) else last
            else:
                header = node
            if not any(a <= last and first <= b for a, b in edited):
                found.append(ast.dump(header, include_attributes=False))
        pending.extend(reversed(children))
    return found


_TORCH_NAME = re.compile(r"(?<![\w.])torch\.")


def _guarded(before: str, after: str, placed: list[_Placed], guard: Optional[Guard]) -> list[tuple[Fix, str]]:
    """The fixes of a round whose text ``guard`` refuses, each tried alone as in
    ``_changed_elsewhere`` (all of them if none is refused alone)."""
    why = guard(after) if guard is not None else ""
    if not why:
        return []
    culprits = [(entry.fix, alone_why) for entry in placed
                for alone_why in [guard(_apply(before, [entry.fix])[0])] if alone_why]
    return culprits or [(entry.fix, f"the fixes together: {why}") for entry in placed]


def fix_notebook(raw: bytes, path: str, rules: Sequence[Rule], unsafe: bool = False) -> FixResult:
    """``fix_source`` for a Jupyter notebook: its code cells are fixed as the one program
    ``check`` reads (IPython syntax kept aside), then only the cells that changed get their new
    source, every other byte of the file as it was. The safety net also skips a fix that would
    edit a magic line, move code across cells, or leave a cell that does not parse on its own.
    Positions in the result are cells and lines in them, as ``check`` gives them."""
    try:
        with recursion_headroom():
            return _fix_notebook(raw, path, rules, unsafe)
    except Exception as error:  # one file's failure must not stop the run
        failure = unexpected_error(path, error)
        return FixResult(raw, errors=[failure], error=failure.message)


def _fix_notebook(raw: bytes, path: str, rules: Sequence[Rule], unsafe: bool) -> FixResult:
    notebook = read_notebook(raw)
    if isinstance(notebook, str):
        return FixResult(raw, errors=[FileError(path, notebook)], error=notebook)
    cells = EditableCells.read(raw, notebook)
    if isinstance(cells, str):  # what check finds remains, and why it is not fixed
        found, errors = place_in_cells(*check_source(notebook.source, path, rules), notebook.locate)
        return _unchanged(raw, path, found, errors, f"not fixed: {cells}", "utf-8")
    code = cells.text.encode("utf-8")
    result = fix_source(code, path, rules, unsafe, guard=lambda text: _cut_error(cells.cut(text)))
    fixed = raw
    if result.source != code:
        changed = cells.cut(result.source.decode("utf-8"))
        fixed = cells.write(changed) if isinstance(changed, dict) else changed
        if isinstance(fixed, str):  # (the guard has refused such a text already)
            original, errors = check_source(code, path, rules)
            result = _unchanged(code, path, original, errors, f"{fixed}; file left unchanged", "utf-8")
            fixed = raw
    before, after = cells.locate(cells.text), cells.locate(result.source.decode("utf-8"))
    applied, _ = place_in_cells(result.applied, [], before)
    unfixed, _ = place_in_cells(result.unfixed, [], before)
    remaining, errors = place_in_cells(result.remaining, result.errors, after)
    return FixResult(fixed, applied, remaining, errors, result.error, "utf-8", unfixed)


def _cut_error(cut) -> str:
    return cut if isinstance(cut, str) else ""


def _rebinds_torch(before: str, placed: list[_Placed]) -> bool:
    """An edit that writes ``torch.…`` in a file where ``torch`` names another module (``import
    numpy as torch``): the fix would call something else than PyTorch."""
    if not any(_TORCH_NAME.search(e.content) for p in placed for e in p.fix.edits):
        return False
    for node in ast.walk(ast.parse(before)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                if bound == "torch" and (isinstance(node, ast.ImportFrom) or alias.name.split(".")[0] != "torch"):
                    return True
    return False


def _not_converging(before: str, after: str, placed: list[_Placed], by_fix: dict[int, Diagnostic],
                    old_diagnostics: list[Diagnostic], diagnostics: list[Diagnostic]) -> list[tuple[Fix, str]]:
    """The fixes that do not reach a fixed point in one round: their own finding is still there
    afterwards (at the same code, moved only by the round's edits before it), or their rule fires
    on the code they wrote more often than it did on the code they replaced (other findings of
    the rule there, whose fixes wait for the next round, count). Another round would fix it
    again, and again."""
    old_starts, new_starts = _offsets(before), _offsets(after)
    # How far the round's edits ending at or before an offset move it: by end, a running sum.
    moves = sorted((old, new) for entry in placed for old, new in zip(entry.old_spans, entry.new_spans))
    ends = [d for (_, d), _ in moves]
    growth = [0]
    for (c, d), (a, b) in moves:
        growth.append(growth[-1] + (b - a) - (d - c))
    found = {(d.code, d.line, d.column) for d in diagnostics}
    # Findings whose fixes make the very same edits (the same statement twice in a row, each
    # removed by removing one copy): the one left is the other's, fixed next round.
    edits_of = Counter((d.code, d.fix.edits) for d in by_fix.values())
    looping = []
    for entry in placed:
        finding = by_fix[id(entry.fix)]
        if edits_of[finding.code, entry.fix.edits] > 1:
            continue
        at = old_starts[finding.line - 1] + finding.column
        shift = growth[bisect_right(ends, at)]
        if not any(c <= at < d for c, d in entry.old_spans):
            moved = at + shift
            line = bisect_right(new_starts, moved)
            if (finding.code, line, moved - new_starts[line - 1]) in found:
                looping.append((entry.fix, "its finding is still there after it"))
                continue
        old_lines, new_lines = _span_lines(old_starts, entry.old_spans), _span_lines(new_starts, entry.new_spans)
        before_count = sum(d.code == finding.code and d is not finding and any(a <= d.line <= b for a, b in old_lines)
                           for d in old_diagnostics)
        after_count = sum(d.code == finding.code and any(a <= d.line <= b for a, b in new_lines) for d in diagnostics)
        if after_count > before_count:
            looping.append((entry.fix, "its rule fires again on what it wrote"))
    return looping


def _unchanged(source: bytes, path: str, diagnostics: list[Diagnostic], errors: list[FileError],
               why: str, encoding: str) -> FixResult:
    """The file as it was, its diagnostics, and one more error saying why no fix applied."""
    return FixResult(source, remaining=diagnostics, errors=[*errors, FileError(path, why)], error=why,
                     encoding=encoding, unfixed=diagnostics)


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


NO_FIX_PREFIX = "no automatic fix: "


def review_diff(path: str, before: bytes, after: bytes, applied: Sequence[Diagnostic],
                remaining: Sequence[Diagnostic], unsafe: bool, encoding: str = "utf-8") -> str:
    """``unified_diff`` laid out for review: each hunk is a patch of its own (``git apply`` and
    ``patch -p1`` take them in turn), preceded by ``#`` lines naming the findings it fixes
    (position, code, message, the fix and its safety class); the findings left alone follow,
    each with why it was not fixed. Comment lines before a patch header are ignored by both
    tools, so the whole text still applies. A notebook's diff is one per changed code cell,
    labelled ``path:cell N`` (as ruff labels them), of the cell's source."""
    out: list[str] = []
    if is_notebook(path):
        old_cells, new_cells = RawNotebook.read(before.removeprefix(BOM)), RawNotebook.read(after.removeprefix(BOM))
        for cell in range(1, old_cells.cell_count + 1 if old_cells and new_cells else 1):
            old_text, new_text = old_cells.cell_text(cell), new_cells.cell_text(cell)
            if old_text != new_text and old_text is not None and new_text is not None:
                label = f"{path}:cell {cell}"
                out.extend(_review_hunks(label, label, _cell_lines(old_text), _cell_lines(new_text),
                                         [d for d in applied if d.cell == cell]))
    else:
        relative = not os.path.isabs(path)
        fromfile, tofile = (f"a/{path}", f"b/{path}") if relative else (path, path)
        out.extend(_review_hunks(fromfile, tofile, _LINES.findall(before.decode(encoding, errors="replace")),
                                 _LINES.findall(after.decode(encoding, errors="replace")), applied))
    for diagnostic in sorted(remaining, key=lambda d: (d.cell or 0, d)):
        out.append(f"# {_where(diagnostic)} {diagnostic.code} {diagnostic.message}\n")
        out.append(f"#   not fixed: {_why_not_fixed(diagnostic, unsafe)}\n")
    return "".join(out)


def _cell_lines(text: str) -> list[str]:
    """A cell's lines for a diff: its last line ends with a line break too (a cell's source
    usually has none, and that is no change worth a "No newline" marker)."""
    return _LINES.findall(text if text.endswith(("\n", "\r")) or not text else text + "\n")


def _review_hunks(fromfile: str, tofile: str, old: list[str], new: list[str],
                  applied: Sequence[Diagnostic]) -> list[str]:
    """The hunks of one text's diff, each after the findings it fixes."""
    groups = list(difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(3)) if old != new else []
    ranges = [(group[0][1], group[-1][2]) for group in groups]  # lines of ``before`` each hunk covers
    by_hunk: list[list[Diagnostic]] = [[] for _ in groups]
    for diagnostic in applied:
        if by_hunk:
            by_hunk[_hunk_of(diagnostic, ranges)].append(diagnostic)
    out: list[str] = []
    for group, diagnostics in zip(groups, by_hunk):
        for diagnostic in sorted(diagnostics):
            fix = diagnostic.fix
            out.append(f"# {_where(diagnostic)} {diagnostic.code} {diagnostic.message}\n")
            if fix is not None:
                out.append(f"#   fixed ({'safe' if fix.safe else 'unsafe'}): {fix.description}\n")
        out.append(f"--- {fromfile}\n+++ {tofile}\n")
        out.extend(_hunk(group, old, new))
    return out


def _where(diagnostic: Diagnostic) -> str:
    cell = f"cell {diagnostic.cell}:" if diagnostic.cell is not None else ""
    return f"{diagnostic.path}:{cell}{diagnostic.line}:{diagnostic.column + 1}:"


def _why_not_fixed(diagnostic: Diagnostic, unsafe: bool) -> str:
    if diagnostic.fix is not None:
        if not diagnostic.fix.safe and not unsafe:
            return f"its fix is unsafe ({diagnostic.fix.description}); apply it with --unsafe-fixes"
        return "its fix overlapped another one and did not apply"
    reason = diagnostic.no_fix[len(NO_FIX_PREFIX):] if diagnostic.no_fix.startswith(NO_FIX_PREFIX) else diagnostic.no_fix
    return reason or "this rule has no automatic fix (`torchmemlint explain " + diagnostic.code + "` says what to do)"


def _hunk_of(diagnostic: Diagnostic, ranges: list[tuple[int, int]]) -> int:
    """The hunk a fix belongs to: the first whose lines its edits touch, else the nearest (a fix
    of a later round has positions in the text of that round)."""
    fix = diagnostic.fix
    spans = [(edit.line - 1, edit.end_line) for edit in fix.edits] if fix is not None and fix.edits else \
        [(diagnostic.line - 1, diagnostic.line)]
    for index, (start, end) in enumerate(ranges):
        if any(a <= end and start <= b for a, b in spans):
            return index
    return min(range(len(ranges)), key=lambda i: min(abs(ranges[i][0] - a) for a, _ in spans))


def _hunk(group, old: list[str], new: list[str]) -> list[str]:
    """One hunk as a patch of its own: its old lines are counted from the text the earlier hunks
    have already changed, which is where its new start is."""
    first, last = group[0], group[-1]
    old_length, new_length = last[2] - first[1], last[4] - first[3]
    where = first[3]  # 0-based, in the text the earlier hunks made; a range of 0 lines names the line before
    lines = [f"@@ -{_range(where + bool(old_length), old_length)} +{_range(where + bool(new_length), new_length)} @@\n"]
    for tag, i1, i2, j1, j2 in group:
        if tag == "equal":
            lines.extend(_marked(" ", old[i1:i2]))
            continue
        if tag in ("replace", "delete"):
            lines.extend(_marked("-", old[i1:i2]))
        if tag in ("replace", "insert"):
            lines.extend(_marked("+", new[j1:j2]))
    return lines


def _range(start: int, length: int) -> str:
    return f"{start}" if length == 1 else f"{start},{length}"


def _marked(mark: str, lines: list[str]) -> list[str]:
    return [mark + line if line.endswith(("\n", "\r")) else mark + line + "\n\\ No newline at end of file\n"
            for line in lines]
