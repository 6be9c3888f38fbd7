"""``torchmemlint server``: a Language Server (over stdio, with pygls) for editors.

It checks a Python document when it is opened, changed or saved, exactly as ``torchmemlint
check --stdin-filename PATH`` would (the same settings for its path, the same rules, ``# noqa``),
publishes the findings as diagnostics (each with its rule page and its why-path as related
information), and offers each finding's fix as a quick fix: safe fixes are marked preferred,
unsafe ones say so in their title. ``source.fixAll.torchmemlint`` applies every safe fix, as
``torchmemlint fix`` would. Files the configuration excludes get no diagnostics.

LSP positions count UTF-16 code units; torchmemlint's columns count code points: every position
is converted with the line's text."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from torchmemlint import __version__, api
from torchmemlint.config import UsageError
from torchmemlint.diagnostics import Diagnostic, Edit, FileError
from torchmemlint.report.sarif import rules_url

SOURCE = "torchmemlint"
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.{SOURCE}"


@dataclass
class _Checked:
    """The last check of one document: its text and what was found in it."""

    text: str
    findings: list = field(default_factory=list)


class TorchMemLintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(SOURCE, __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full)
        self.checked: dict[str, _Checked] = {}


server = TorchMemLintServer()


def _path(uri: str) -> Optional[str]:
    """The file a ``file:`` URI names (None for unsaved buffers and other schemes)."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else None


def _utf16(line: str, column: int) -> int:
    """The UTF-16 offset of a code-point column in ``line``."""
    prefix = line[:column]
    return column + sum(1 for char in prefix if ord(char) > 0xFFFF)


def _position(lines: list[str], line: int, column: int) -> types.Position:
    """A 1-based line and code-point column as an LSP position."""
    text = lines[line - 1] if 1 <= line <= len(lines) else ""
    return types.Position(line=max(line - 1, 0), character=_utf16(text, column))


def _range(lines: list[str], line: int, column: int, end_line: int, end_column: int) -> types.Range:
    start = _position(lines, line, column)
    if not end_line or (end_line, end_column) < (line, column):
        end_line, end_column = line, column
    return types.Range(start=start, end=_position(lines, end_line, end_column))


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def check_document(uri: str, text: str) -> list:
    """The findings ``check`` reports for this text under its path's settings."""
    path = _path(uri)
    if path is None or path.endswith(".ipynb"):
        return []
    try:
        tasks = list(api.plan([], stdin_filename=path, force_exclude=True))
    except UsageError as error:  # a bad configuration: say so where the user looks
        return [FileError(path, f"configuration error: {error}")]
    if not tasks:
        return []  # excluded
    return api.check_bytes(tasks[0], text.encode("utf-8")).findings


def _diagnostic(uri: str, lines: list[str], finding) -> types.Diagnostic:
    is_diagnostic = isinstance(finding, Diagnostic)
    base = rules_url()
    related = [types.DiagnosticRelatedInformation(
        location=types.Location(uri=uri, range=_range(lines, place.line, place.column, place.end_line,
                                                      place.end_column)),
        message=place.message) for place in finding.related] if is_diagnostic else []
    return types.Diagnostic(
        range=_range(lines, finding.line, finding.column, finding.end_line if is_diagnostic else 0,
                     finding.end_column if is_diagnostic else 0),
        message=finding.message,
        severity=types.DiagnosticSeverity.Warning if is_diagnostic else types.DiagnosticSeverity.Error,
        code=finding.code,
        code_description=types.CodeDescription(href=f"{base}{finding.code}.md") if base else None,
        source=SOURCE,
        related_information=related or None,
    )


def publish(ls: TorchMemLintServer, uri: str) -> None:
    document = ls.workspace.get_text_document(uri)
    findings = check_document(uri, document.source)
    ls.checked[uri] = _Checked(document.source, findings)
    lines = _lines(document.source)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
        uri=uri, version=document.version, diagnostics=[_diagnostic(uri, lines, f) for f in findings]))


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: TorchMemLintServer, params: types.DidOpenTextDocumentParams) -> None:
    publish(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: TorchMemLintServer, params: types.DidChangeTextDocumentParams) -> None:
    publish(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: TorchMemLintServer, params: types.DidSaveTextDocumentParams) -> None:
    publish(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: TorchMemLintServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.checked.pop(params.text_document.uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))


def _text_edit(lines: list[str], edit: Edit) -> types.TextEdit:
    return types.TextEdit(range=_range(lines, edit.line, edit.column, edit.end_line, edit.end_column),
                          new_text=edit.content)


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
    code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]))
def code_action(ls: TorchMemLintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    checked = ls.checked.get(uri)
    if checked is None:
        return []
    lines = _lines(checked.text)
    wanted = params.context.only
    actions = []
    if not wanted or types.CodeActionKind.QuickFix in wanted:
        for finding in checked.findings:
            fix = getattr(finding, "fix", None)
            if fix is None or not fix.edits:
                continue
            diagnostic = _diagnostic(uri, lines, finding)
            if not _overlaps(diagnostic.range, params.range):
                continue
            actions.append(types.CodeAction(
                title=f"{fix.description} ({finding.code}{'' if fix.safe else ', unsafe fix'})",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                is_preferred=fix.safe,
                edit=types.WorkspaceEdit(changes={uri: [_text_edit(lines, e) for e in fix.edits]}),
            ))
    if not wanted or any(FIX_ALL_KIND.startswith(kind) for kind in wanted):
        fixed = _fix_all(uri, checked.text)
        if fixed is not None and fixed != checked.text:
            whole = types.Range(start=types.Position(line=0, character=0),
                                end=types.Position(line=len(lines), character=0))
            actions.append(types.CodeAction(
                title="torchmemlint: apply all safe fixes", kind=FIX_ALL_KIND,
                edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(range=whole, new_text=fixed)]})))
    return actions


def _fix_all(uri: str, text: str) -> Optional[str]:
    path = _path(uri)
    if path is None or path.endswith(".ipynb"):
        return None
    tasks = list(api.plan([], stdin_filename=path, force_exclude=True))
    if not tasks:
        return None
    outcome = api.fix_bytes(tasks[0], text.encode("utf-8"))
    return outcome.fixed.decode(outcome.encoding) if outcome.changed else None


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(position: types.Position) -> tuple[int, int]:
        return position.line, position.character
    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def main() -> None:
    server.start_io()
