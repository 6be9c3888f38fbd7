"""A content-hash cache of each file's results, so that an unchanged tree re-lints in a fraction
of a second.

An entry is keyed on everything a file's result depends on: its bytes, its path (diagnostics
carry it, and rules read it), its task (the selected rules) and the tool itself (its version and
a hash of its own source files, so that editing torchmemlint invalidates every entry). Entries
are small JSON files under ``.torchmemlint_cache/<tool hash>/``, written atomically (a temporary
file, then a rename), so concurrent runs never see half an entry; an entry that does not decode
is a miss. The folder holds a ``.gitignore`` of its own and a ``CACHEDIR.TAG``, so neither git
nor backup tools pick it up.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
import types
import typing
from functools import lru_cache
from pathlib import Path
from typing import Optional

from torchmemlint import __version__
from torchmemlint.diagnostics import Diagnostic, Edit, FileError, Fix, IterationSpan, Related

CACHE_FOLDER_NAME = ".torchmemlint_cache"
_PACKAGE_DIR = Path(__file__).resolve().parent
_CACHEDIR_TAG = (b"Signature: 8a477f597d28d172789f06886806bc55\n"
                 b"# This file is a cache directory tag created by torchmemlint.\n")


def project_root(start: Optional[Path] = None) -> Path:
    """The nearest folder at or above ``start`` (default: the working directory) holding a
    ``pyproject.toml`` or ``.git``; else ``start`` itself."""
    start = (start or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if (folder / "pyproject.toml").is_file() or (folder / ".git").exists():
            return folder
    return start


@lru_cache(maxsize=None)
def tool_fingerprint() -> str:
    """The version and a hash of every source file of the installed package: a change to the
    rules invalidates the cache even without a version bump (development installs)."""
    digest = hashlib.sha256(__version__.encode())
    for path in sorted(_PACKAGE_DIR.rglob("*")):
        if path.suffix in (".py", ".md") and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(_PACKAGE_DIR)).encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


class ResultCache:
    """Results of ``api.check_file`` by key; plain data, so it travels to worker processes."""

    def __init__(self, folder: Path, fingerprint: Optional[str] = None) -> None:
        self.root = Path(folder)
        self.fingerprint = fingerprint or tool_fingerprint()
        self.folder = self.root / self.fingerprint

    @classmethod
    def for_project(cls, start: Optional[Path] = None) -> "ResultCache":
        return cls(project_root(start) / CACHE_FOLDER_NAME)

    def key(self, task: object, source: bytes) -> str:
        """The entry name for ``task`` (a dataclass: path, rules, ...) on these bytes."""
        fields = tuple(getattr(task, f.name) for f in dataclasses.fields(task))  # (astuple deep-copies)
        digest = hashlib.sha256(repr(fields).encode())
        digest.update(b"\0")
        digest.update(source)
        return digest.hexdigest()

    def get(self, key: str) -> Optional[tuple[list[Diagnostic], list[FileError]]]:
        """The entry stored under ``key``, or None: absent, or anything but an entry written for
        this key (an entry copied from another key, a truncated or hand-edited one, a field of the
        wrong type) is a miss, never an error or another file's result."""
        try:
            with open(self.folder / key, "rb") as file:
                entry = json.loads(file.read())
            if not isinstance(entry, dict) or entry.get("key") != key:
                return None
            diagnostics = [_diagnostic(d) for d in entry["diagnostics"]]
            errors = [FileError(*e) for e in entry["errors"]]
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            return None
        if all(_conforms(item, type(item)) for item in (*diagnostics, *errors)):
            return diagnostics, errors
        return None

    def put(self, key: str, diagnostics: list[Diagnostic], errors: list[FileError]) -> None:
        """Store an entry; a cache that cannot be written is only slower, never an error."""
        data = json.dumps({
            "key": key,  # (the file's own hash is in it: an entry copied to another name is refused)
            "diagnostics": [dataclasses.astuple(d) for d in diagnostics],
            "errors": [dataclasses.astuple(e) for e in errors],
        }, separators=(",", ":")).encode()
        try:
            self._prepare()
            descriptor, temporary = tempfile.mkstemp(dir=self.folder, prefix=".entry.", suffix=".tmp")
            try:
                with os.fdopen(descriptor, "wb") as file:
                    file.write(data)
                os.replace(temporary, self.folder / key)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:
            pass

    def _prepare(self) -> None:
        """Create the folder on first use, and drop the entries of other tool versions."""
        if self.folder.is_dir():
            return
        self.root.mkdir(parents=True, exist_ok=True)
        for name, content in ((".gitignore", b"# Created by torchmemlint.\n*\n"), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
            marker = self.root / name
            if not marker.exists():
                marker.write_bytes(content)
        for stale in self.root.iterdir():
            if stale.is_dir() and stale.name != self.fingerprint:
                shutil.rmtree(stale, ignore_errors=True)
        self.folder.mkdir(exist_ok=True)


def _diagnostic(fields: list) -> Diagnostic:
    *head, fix, related, iteration, no_fix = fields
    if fix is not None:
        description, safe, edits = fix
        fix = Fix(description, safe, tuple(Edit(*edit) for edit in edits))
    return Diagnostic(*head, fix=fix, related=tuple(Related(*r) for r in related),
                      iteration=IterationSpan(*iteration) if iteration is not None else None, no_fix=no_fix)


def _conforms(value: object, hint: object) -> bool:
    """Whether ``value`` has the type ``hint`` names: a dataclass of this package (each field
    checked against its annotation), ``Optional[...]``, ``tuple[X, ...]``, or a plain type."""
    if dataclasses.is_dataclass(hint):
        return type(value) is hint and all(
            _conforms(getattr(value, name), field_hint) for name, field_hint in _field_hints(hint))
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        return any(_conforms(value, option) for option in typing.get_args(hint))
    if origin is tuple:
        item_hint = typing.get_args(hint)[0]
        return type(value) is tuple and all(_conforms(item, item_hint) for item in value)
    if hint is type(None):
        return value is None
    if hint is int:
        return type(value) is int  # (not a bool)
    return isinstance(value, hint)


@lru_cache(maxsize=None)
def _field_hints(cls: type) -> tuple[tuple[str, object], ...]:
    hints = typing.get_type_hints(cls)
    return tuple((f.name, hints[f.name]) for f in dataclasses.fields(cls))
