"""Parse a long file with LibCST in parts of about ``PART_LINES`` lines and join the parts into
the tree one parse of the whole file gives (the same code, statement for statement).

Why: LibCST's native parser costs more per line as a file grows (measured on generated training
code, ``bench/scaling.py``'s shapes: 35–49 µs per line at 2k lines, 47–67 µs at 32k lines),
while parts of a few hundred lines cost what a small file costs (31–43 µs per line at either
size; one function of 32k lines parsed in parts of 200 lines took 1.32 s, of 500 lines 1.48 s, of
1,000 lines 1.60 s, where files of many statements changed by less than the noise). Splitting is
done where Python's ``ast`` (the pre-screen's parse) says
statements end: between top-level statements, and between the statements of the body of a
compound statement with one body (``def``, ``class``, ``for``/``while`` without ``else``,
``with``, ``if`` without ``else``) that is itself longer than a part, at any depth: its header is
parsed with ``pass`` for a body, and each part of its body under stand-in headers (``if 1:``, one
per enclosing level, at that level's indentation) that put the lines at their depth. Anything this module is not sure it
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
        body, footer, _ = self._block(statements, 0, len(self.lines), [])
        if self.first is None or self.latest is None:
            return None
        return self.first.with_changes(body=body, footer=footer, has_trailing_newline=self.latest.has_trailing_newline,
                                       default_indent=self.indent or self.first.default_indent)

    def _block(self, statements: Sequence[ast.stmt], start: int, stop: int, stand_ins: list[bytes]) \
            -> tuple[list[cst.BaseStatement], Sequence[cst.EmptyLine], Optional[str]]:
        """The statements of one block (the module's, or a compound's body under ``stand_ins``,
        the ``if 1:`` headers that put its lines at their depth), parsed part by part; a part that
        is one long compound statement is split in turn. With the block's footer and the
        indentation LibCST gives it (relative to its header; None for the module)."""
        body: list[cst.BaseStatement] = []
        footer: Sequence[cst.EmptyLine] = ()
        indent: Optional[str] = None
        for begin, end, members in self._parts(statements, start, stop):
            single = members[0] if len(members) == 1 else None
            if single is not None and end - begin > self.part_lines and _splittable(single):
                compound = self._split(single, begin, stand_ins)
                if compound is not None:
                    if end > single.end_lineno:
                        if stand_ins:
                            raise _CannotJoin  # (only the file's last part runs past its last statement)
                        footer = self._footer(single.end_lineno, end)
                    else:
                        footer = ()
                    body.append(compound)
                    continue
            statements_found, footer, part_indent = self._parsed_under(stand_ins, self.lines[begin:end],
                                                                      any(map(_opens_block, members)), begin == 0)
            if indent is not None and part_indent != indent:
                raise _CannotJoin
            indent = part_indent
            body.extend(statements_found)
        return body, footer, indent

    def _split(self, statement: ast.stmt, begin: int, stand_ins: list[bytes]) -> Optional[cst.BaseStatement]:
        """A long compound statement whose body is cut in parts: its header parsed with a stand-in
        body (``pass``), its body's statements parsed under one more stand-in header, at its own
        indentation. None when its body is one part."""
        cut = first_line(statement.body[0]) - 1  # (0-based) the body's first statement, less
        while cut > statement.lineno and (not self.lines[cut - 1].strip() or self.lines[cut - 1].lstrip().startswith(b"#")):
            cut -= 1  # ... the blank and comment lines before it, which are its leading lines
        if cut <= statement.lineno - 1 or len(self._parts(statement.body, cut, statement.end_lineno)) < 2:
            return None
        own_indent = _indentation(self.lines[statement.lineno - 1])
        body_indent = _indentation(self.lines[first_line(statement.body[0]) - 1])
        header = self._parsed_under(stand_ins, [*self.lines[begin:cut], body_indent + b"pass" + self.newline],
                                    True, begin == 0)[0]
        compound = header[0] if len(header) == 1 else None
        if type(compound).__name__ != _COMPOUNDS[type(statement)] or not isinstance(compound.body, cst.IndentedBlock):
            raise _CannotJoin
        statements, footer, indent = self._block(statement.body, cut, statement.end_lineno,
                                                 [*stand_ins, own_indent + b"if 1:" + self.newline])
        if indent != compound.body.indent:
            raise _CannotJoin
        return compound.with_changes(body=compound.body.with_changes(body=statements, footer=footer))

    def _parsed_under(self, stand_ins: list[bytes], lines: list[bytes], has_block: bool,
                      file_start: bool) -> tuple[Sequence[cst.BaseStatement], Sequence[cst.EmptyLine], Optional[str]]:
        """The statements of ``lines`` parsed inside ``stand_ins``, with the footer and
        indentation of the innermost stand-in's block (None at the top, where the lines before
        the first statement are the file's header at its start, else that statement's)."""
        part = self._parsed([*stand_ins, *lines], has_block or bool(stand_ins))
        if not stand_ins:
            return part.body if file_start else self._with_header(part), part.footer, None
        block: Optional[cst.IndentedBlock] = None
        statements_found: Sequence[cst.BaseStatement] = part.body
        if part.header:
            raise _CannotJoin
        for _ in stand_ins:
            stand_in = statements_found[0] if len(statements_found) == 1 else None
            if not isinstance(stand_in, cst.If) or stand_in.orelse is not None or \
                    not isinstance(stand_in.body, cst.IndentedBlock) or stand_in.leading_lines:
                raise _CannotJoin
            block = stand_in.body
            statements_found = block.body
        assert block is not None
        return statements_found, block.footer, block.indent

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


def _opens_block(statement: ast.stmt) -> bool:
    """Whether an indented block may start in this top-level statement: a compound statement
    of more than one line. Only then does LibCST see the indentation it takes as the default (a
    one-line ``if x: y`` holds no block, nor can anything inside it)."""
    compound = hasattr(statement, "body") or hasattr(statement, "cases")  # (``match``)
    return compound and (statement.end_lineno or statement.lineno) > statement.lineno


def _splittable(statement: ast.stmt) -> bool:
    """A compound statement with one body (no ``else``, handlers or cases) of several statements,
    starting on a line after its header."""
    if type(statement) not in _COMPOUNDS or getattr(statement, "orelse", None) or len(statement.body) < 2:
        return False
    return first_line(statement.body[0]) > statement.lineno


def _indentation(line: bytes) -> bytes:
    return line[:len(line) - len(line.lstrip(b" \t\f"))]


# The compound statements whose body may be cut, with the name of the LibCST node each parses to
# (a name: importing this module must not load LibCST's nodes, which a file no rule checks never needs).
_COMPOUNDS = {
    ast.FunctionDef: "FunctionDef", ast.AsyncFunctionDef: "FunctionDef", ast.ClassDef: "ClassDef",
    ast.For: "For", ast.While: "While", ast.With: "With", ast.If: "If",
}
