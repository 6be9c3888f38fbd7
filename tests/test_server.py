"""``torchmemlint server`` driven over stdio by a real LSP client (pygls's): initialize, open a
leaking file, receive its diagnostics, ask for code actions, apply the edit, see the finding go;
change and save re-check."""
from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from support import LEAK_LINE, LEAKING_SCRIPT, module_env, write

pygls_client = pytest.importorskip("pygls.lsp.client")
types = pytest.importorskip("lsprotocol.types")

SAFE_SCRIPT = """\
def train(model, loader, optimizer, criterion):
    total = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss
    print(f"mean loss {total / len(loader):.4f}")
"""


def apply_edits(text: str, edits) -> str:
    """Apply LSP text edits (ASCII text: UTF-16 offsets are character offsets)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position):
        return starts[min(position.line, len(lines))] + position.character

    for edit in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


class Session:
    """A pygls client speaking to ``python -m torchmemlint server`` over its stdin/stdout."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.client = pygls_client.LanguageClient("torchmemlint-tests", "1")
        self.published: asyncio.Queue = asyncio.Queue()

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params):
            self.loop.call_soon_threadsafe(self.published.put_nowait, params)

    async def start(self):
        self.loop = asyncio.get_running_loop()
        await self.client.start_io(sys.executable, "-m", "torchmemlint", "server", cwd=str(self.folder),
                                   env=module_env())
        result = await asyncio.wait_for(self.client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(), root_uri=self.folder.as_uri())), 60)
        self.client.initialized(types.InitializedParams())
        return result

    async def diagnostics(self):
        return await asyncio.wait_for(self.published.get(), 60)

    async def stop(self):
        await asyncio.wait_for(self.client.shutdown_async(None), 30)
        self.client.exit(None)
        await self.client.stop()


def run_session(folder: Path, scenario):
    async def main():
        session = Session(folder)
        try:
            return await scenario(session, await session.start())
        finally:
            await session.stop()
    return asyncio.run(main())


def test_diagnostics_code_actions_and_edits_over_stdio(tmp_path):
    path = write(tmp_path, "train.py", SAFE_SCRIPT)
    uri = path.as_uri()

    async def scenario(session, initialized):
        assert initialized.server_info.name == "torchmemlint"
        assert initialized.capabilities.code_action_provider
        session.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=SAFE_SCRIPT)))
        published = await session.diagnostics()
        assert published.uri == uri
        [diagnostic] = published.diagnostics
        assert (diagnostic.code, diagnostic.source) == ("TML001", "torchmemlint")
        assert (diagnostic.range.start.line, diagnostic.range.start.character) == (7, 17)
        assert (diagnostic.range.end.line, diagnostic.range.end.character) == (7, 21)
        assert diagnostic.code_description.href.endswith("/TML001.md")
        assert diagnostic.related_information[0].message == "graph made by `criterion(...)`"

        actions = await asyncio.wait_for(session.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]))), 60)
        quick_fixes = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
        [quick_fix] = quick_fixes
        assert quick_fix.is_preferred and quick_fix.title == "keep the Python number (`.item()`) (TML001)"
        fixed = apply_edits(SAFE_SCRIPT, quick_fix.edit.changes[uri])
        assert fixed == SAFE_SCRIPT.replace("total += loss", "total += loss.item()")
        [fix_all] = [a for a in actions if a.kind == "source.fixAll.torchmemlint"]
        assert apply_edits(SAFE_SCRIPT, fix_all.edit.changes[uri]) == fixed

        # The editor applies the edit: the document changes, and the finding is gone.
        session.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)]))
        assert not (await session.diagnostics()).diagnostics
        # Saved with a leak again: diagnostics come back.
        session.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=LEAKING_SCRIPT)]))
        [unsafe] = (await session.diagnostics()).diagnostics
        assert unsafe.range.start.line == LEAK_LINE - 1
        session.client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))
        assert len((await session.diagnostics()).diagnostics) == 1
        actions = await asyncio.wait_for(session.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=unsafe.range,
            context=types.CodeActionContext(diagnostics=[unsafe]))), 60)
        [unsafe_fix] = actions  # no safe fix: no fix-all action
        assert not unsafe_fix.is_preferred and unsafe_fix.title.endswith("(TML001, unsafe fix)")

    run_session(tmp_path, scenario)


def test_settings_of_the_path_apply_and_utf16_columns(tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.torchmemlint]\nextend-exclude = ["generated/"]\n')
    excluded = write(tmp_path, "generated/train.py", LEAKING_SCRIPT)
    # A character outside the Basic Multilingual Plane is two UTF-16 code units: the finding
    # after it on its line is at code point 31, UTF-16 offset 32.
    wide = LEAKING_SCRIPT.replace("losses.append(loss)", "s = '😀'; losses.append(loss)")
    checked = write(tmp_path, "train.py", wide)

    async def scenario(session, _):
        session.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=excluded.as_uri(), language_id="python", version=1,
                                                 text=LEAKING_SCRIPT)))
        assert not (await session.diagnostics()).diagnostics
        session.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=checked.as_uri(), language_id="python", version=1,
                                                 text=wide)))
        [diagnostic] = (await session.diagnostics()).diagnostics
        assert (diagnostic.range.start.character, diagnostic.range.end.character) == (32, 36)

    run_session(tmp_path, scenario)


def test_server_without_pygls_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    from torchmemlint import cli
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pygls" else real(name, *a))
    assert cli.main(["server"]) == 2
    assert "pip install 'torchmemlint[server]'" in capsys.readouterr().err
