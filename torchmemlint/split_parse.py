"""Parse a long file with LibCST in parts of about ``PART_LINES`` lines and join the parts into
the tree one parse of the whole file gives (the same code, statement for statement).

Why: LibCST's native parser costs more per line as a file grows (measured on generated training
code, ``bench/scaling.py``'s shapes: 35–49 µs per line at 2k lines, 47–67 µs at 32k lines),
while parts of a few hundred lines cost what a small file costs (31–43 µs per line at either
size; one function of 32k lines parsed in parts of 200 lines took 1.32 s, of 500 lines 1.48 s, of
1,000 lines 1.60 s, where files of many statements changed by less than the noise). Splitting is
done where Python's ``ast`` (the pre-screen's parse) says
statements end: between top-level statements, and between the statements of a top-level
``def``/``class`` body that is itself longer than a part. Anything this module is not sure it
joins exactly (another encoding than UTF-8, a byte-order mark, line ends or indentation that the
parts detect differently, a part LibCST rejects) gives None, and the caller parses the whole file.

What differs from one parse: comment lines after a block that is cut at its end (indented more
deeply than the next statement) are that next statement's leading lines instead of the block's
footer; the code, and so every position, is the same."""
from __future__ import annotations

import ast
import codecs
from typing import Optional, Sequence

import libcst as cst

from torchmemlint.semantics.prescreen import first_line

# Files shorter than this are parsed whole: the parser's growth is not yet measurable there.
MIN_LINES = 1_000
PART_LINES = 200

def parse_in_parts(source: bytes, tree: ast.Module) -> Optional[cst.Module]:
    """The module parsed in parts, or None where one parse of the whole must do."""
    if source.count(b"\n") < MIN_LINES or source.startswith(codecs.BOM_UTF8):
        return None
    lines = source.splitlines(keepends=True)
    if len(lines) != source.count(b"\n") + (not source.endswith(b"\n")):
        return None  # a lone carriage return: Python and bytes.splitlines may count lines apart
    try:
        return _Joiner(lines, PART_LINES).module(tree.body)
    except (cst.ParserSyntaxError, _CannotJoin, UnicodeDecodeError, SyntaxError, LookupError):
        return None


class _CannotJoin(Exception):
    pass


class _Joiner:
    def __init__(self, lines: list[bytes], part_lines: int) -> None:
        self.lines = lines
        self.part_lines = part_lines
        self.first: Optional[cst.Module] = None  # the part the file starts with: encoding, indent, newline
        self.latest: Optional[cst.Module] = None  # the part parsed last: whether the file ends a line
        self.newline = b"\n"  # the first part's line end, for the stand-in headers
        self.indent: Optional[str] = None  # the indentation of the file's first indented block

    def module(self, statements: Sequence[ast.stmt]) -> Optional[cst.Module]:
        body: list[cst.BaseStatement] = []
        footer: Sequence[cst.EmptyLine] = ()
        for start, end, members in self._parts(statements, 0, len(self.lines)):
            single = members[0] if len(members) == 1 else None
            inner = self._parts(single.body, start, single.end_lineno) \
                if single is not None and end - start > self.part_lines and _splittable(single) else []
            if len(inner) > 1:
                body.append(self._compound(inner))
                footer = self._footer(single.end_lineno, end)
                continue
            part = self._parsed(self.lines[start:end], any(map(_opens_block, members)))
            body.extend(self._with_header(part) if start else part.body)
            footer = part.footer
        if self.first is None or self.latest is None:
            return None
        return self.first.with_changes(body=body, footer=footer, has_trailing_newline=self.latest.has_trailing_newline,
                                       default_indent=self.indent or self.first.default_indent)

    def _footer(self, start: int, end: int) -> Sequence[cst.EmptyLine]:
        """The blank and comment lines ``[start, end)`` after the file's last statement."""
        if start == end:
            return ()
        lines = self._parsed(self.lines[start:end], has_block=False)
        if lines.body:
            raise _CannotJoin
        return [*lines.header, *lines.footer]

    def _parts(self, statements: Sequence[ast.stmt], start: int,
               stop: int) -> list[tuple[int, int, list[ast.stmt]]]:
        """Line ranges ``[start, end)`` (0-based) of consecutive statements, each about
        ``part_lines`` long, cut only after a statement's last line where the next statement
        starts on a later line; with the statements in each."""
        parts: list[tuple[int, int, list[ast.stmt]]] = []
        begin, members, previous_end = start, [], start
        for statement in statements:
            first, end = first_line(statement), statement.end_lineno or statement.lineno
            if members and first > previous_end and end - previous_end > self.part_lines:
                # (a long statement gets a range of its own: it may be split in turn)
                parts.append((begin, previous_end, members))
                begin, members = previous_end, []
            if members and first > previous_end and previous_end - begin >= self.part_lines:
                parts.append((begin, previous_end, members))
                begin, members = previous_end, []
            members.append(statement)
            previous_end = end
        parts.append((begin, stop, members))
        return parts

    def _parsed(self, lines: list[bytes], has_block: bool = True) -> cst.Module:
        """One part parsed. The parts must agree on the module-wide defaults their nodes leave
        out: the line end, and the indentation (LibCST's default one where a part has no
        indented block: that part's default then says nothing)."""
        module = cst.parse_module(b"".join(lines))
        if self.first is None:
            if module.encoding.lower().replace("_", "-") not in ("utf-8", "utf8"):
                raise _CannotJoin  # (later parts would be read as UTF-8: they lack the cookie)
            self.first = module
            self.newline = module.default_newline.encode()
        elif module.default_newline != self.first.default_newline:
            raise _CannotJoin
        if has_block:
            if self.indent is None:
                self.indent = module.default_indent
            elif module.default_indent != self.indent:
                raise _CannotJoin
        self.latest = module
        return module

    @staticmethod
    def _with_header(part: cst.Module) -> Sequence[cst.BaseStatement]:
        """A later part's statements, the lines before its first statement (its module header,
        here) moved to that statement's leading lines, where one parse puts them."""
        if not part.header:
            return part.body
        first, *rest = part.body
        return [first.with_changes(leading_lines=[*part.header, *first.leading_lines]), *rest]

    def _compound(self, body_parts: list[tuple[int, int, list[ast.stmt]]]) -> cst.BaseStatement:
        """One long ``def``/``class`` whose body is cut in ``body_parts`` (the first holding its
        header and leading lines): the first part parsed as it stands, each later one under a
        stand-in header (``if 1:``), the body's statements joined in one block."""
        (first_start, first_end, _), *later = body_parts
        head = self._parsed(self.lines[first_start:first_end])
        if len(head.body) != 1 or not isinstance(head.body[0], (cst.ClassDef, cst.FunctionDef)):
            raise _CannotJoin
        compound = head.body[0]
        block = compound.body
        if not isinstance(block, cst.IndentedBlock):
            raise _CannotJoin
        statements = list(block.body)
        footer: Sequence[cst.EmptyLine] = block.footer
        for part_start, part_end, _ in later:
            part = self._parsed([b"if 1:" + self.newline, *self.lines[part_start:part_end]])
            stand_in = part.body[0] if len(part.body) == 1 and not part.header else None
            if not isinstance(stand_in, cst.If) or not isinstance(stand_in.body, cst.IndentedBlock) \
                    or stand_in.body.indent != block.indent:
                raise _CannotJoin
            statements.extend(stand_in.body.body)
            footer = stand_in.body.footer
        compound = compound.with_changes(body=block.with_changes(body=statements, footer=footer))
        if head.header and first_start:  # (a later part: its leading lines, as in ``_with_header``)
            compound = compound.with_changes(leading_lines=[*head.header, *compound.leading_lines])
        return compound


def _opens_block(statement: ast.stmt) -> bool:
    """Whether an indented block may start in this top-level statement: a compound statement
    of more than one line. Only then does LibCST see the indentation it takes as the default (a
    one-line ``if x: y`` holds no block, nor can anything inside it)."""
    compound = hasattr(statement, "body") or hasattr(statement, "cases")  # (``match``)
    return compound and (statement.end_lineno or statement.lineno) > statement.lineno


def _splittable(statement: ast.stmt) -> bool:
    return isinstance(statement, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and len(statement.body) > 1
