"""Finding the files to check, reading them, and writing them back atomically.

Reading stops at bytes: decoding (PEP 263 cookies, BOM) is the engine's job, so that the command
line and the flake8 plugin decode the same way. Anything that keeps a file from being read
becomes a ``FileError`` for that file; nothing here raises for a bad file.
"""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional, Protocol, Union

from torchmemlint.diagnostics import FileError, warn
from torchmemlint.notebooks import SUFFIX as NOTEBOOK_SUFFIX
from torchmemlint.patterns import PathPattern, last_match, parse_gitignore, relative_posix

PYTHON_SUFFIX = ".py"
CHECKED_SUFFIXES = (PYTHON_SUFFIX, NOTEBOOK_SUFFIX)  # Python files and Jupyter notebooks
DEFAULT_MAX_FILE_SIZE = 10 * 1024 * 1024

# Folders that hold tools' caches, version control data, installed packages or build output.
# Virtual environments with other names are recognised by their ``pyvenv.cfg``.
DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".hg", ".svn", ".ipynb_checkpoints", ".mypy_cache",
    ".nox", ".pytest_cache", ".ruff_cache", ".torchmemlint_cache", ".tox", ".venv",
    "__pycache__", "__pypackages__", "_build", "buck-out", "build", "dist", "node_modules",
    "site-packages", "venv", "*.egg-info",
)


class ExcludeSettings(Protocol):
    """What discovery needs from the settings of a folder (``config.Settings`` has it)."""

    root: Path  # the project folder: command-line paths are excluded up to it

    def excludes(self, path: Path, is_dir: bool) -> bool:
        """Whether an ``exclude`` pattern matches the absolute ``path`` itself."""


class Excluder:
    """Decides whether a path is excluded, by the ``exclude`` patterns of the settings that apply
    to its folder and by the ``.gitignore`` files of its git repository.

    File tests use ``os.path`` (false on any error), not ``pathlib`` (which raises on a folder
    that may not be entered)."""

    def __init__(self, settings_for: Callable[[Path], ExcludeSettings], respect_gitignore: bool = True) -> None:
        self._settings_for = settings_for
        self._respect_gitignore = respect_gitignore
        # Per run, not per process: the files may change between runs of a long-lived process.
        self._git_top_by_folder: dict[Path, Optional[Path]] = {}
        self._gitignore_by_folder: dict[str, list[PathPattern]] = {}
        self._settings_by_folder: dict[Path, ExcludeSettings] = {}

    def is_excluded(self, path: Path, is_dir: bool) -> bool:
        """``path`` is absolute; only the path itself is tested, not its parents."""
        folder = path.parent
        settings = self._settings_by_folder.get(folder)
        if settings is None:  # discovery asks for every entry of a folder
            settings = self._settings_by_folder[folder] = self._settings_for(folder)
        if settings.excludes(path, is_dir):
            return True
        if is_dir and os.path.isfile(path / "pyvenv.cfg"):
            return True  # a virtual environment, whatever its name
        return self._respect_gitignore and self._is_gitignored(path, is_dir)

    def is_excluded_with_parents(self, path: Path, is_dir: bool) -> bool:
        """For paths named on the command line: excluded if the path or any folder above it
        (below the project root) is excluded."""
        if self.is_excluded(path, is_dir):
            return True
        root = self._settings_for(path.parent).root
        return any(self.is_excluded(parent, True) for parent in path.parents
                   if parent != root and root in parent.parents)

    def _is_gitignored(self, path: Path, is_dir: bool) -> bool:
        top = self._git_top(path.parent)
        if top is None:
            return False  # as in git, .gitignore files outside a repository mean nothing
        ignored = False
        inside = relative_posix(path, top)
        if inside is None:
            return False
        # From the top's .gitignore down to the file's folder: deeper ones override higher ones.
        names = inside.split("/")
        folder = str(top)
        for depth in range(len(names)):
            patterns = self._gitignore(folder)
            if patterns:
                match = last_match(patterns, "/".join(names[depth:]), is_dir)
                if match is not None:
                    ignored = not match.negated
            folder = os.path.join(folder, names[depth])
        return ignored

    def _git_top(self, folder: Path) -> Optional[Path]:
        """The top folder of the git repository holding ``folder``, if any."""
        if folder not in self._git_top_by_folder:
            if os.path.exists(folder / ".git"):
                top: Optional[Path] = folder
            else:
                top = None if folder.parent == folder else self._git_top(folder.parent)
            self._git_top_by_folder[folder] = top
        return self._git_top_by_folder[folder]

    def _gitignore(self, folder: str) -> list[PathPattern]:
        """The ignore patterns of a folder: its ``.gitignore``; at a repository's top, after the
        repository's own ``info/exclude`` (git reads that first, so ``.gitignore`` overrides it)."""
        patterns = self._gitignore_by_folder.get(folder)
        if patterns is None:
            text = _read_text(os.path.join(folder, ".gitignore"))
            git_dir = _git_dir(folder)
            if git_dir is not None:
                text = _read_text(os.path.join(git_dir, "info", "exclude")) + "\n" + text
            patterns = self._gitignore_by_folder[folder] = parse_gitignore(text)
        return patterns


def _read_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _git_dir(top: str) -> Optional[str]:
    """The folder holding a repository's ``info/exclude``: ``.git`` itself, or for a worktree or
    submodule (whose ``.git`` is a file ``gitdir: PATH``) the common folder PATH belongs to."""
    dot_git = os.path.join(top, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    first_line = _read_text(dot_git).split("\n", 1)[0]
    if not first_line.startswith("gitdir:"):
        return None
    git_dir = os.path.join(top, first_line[len("gitdir:"):].strip())
    common = _read_text(os.path.join(git_dir, "commondir")).strip()
    return os.path.normpath(os.path.join(git_dir, common)) if common else git_dir


def discover(paths: Iterable[str], excluder: Excluder, force_exclude: bool = False) -> list[str]:
    """The files to check, in a deterministic order, without duplicates.

    Folders are walked for ``*.py`` files and ``*.ipynb`` notebooks, skipping excluded files and
    folders. A file named directly is checked even if excluded (unless ``force_exclude``) and
    whatever its suffix, if it is Python (``.py``, ``.ipynb`` or a python shebang; another one
    is skipped with a warning); a named path that does not exist is kept, so that reading it
    reports the error.
    """
    found: dict[str, str] = {}  # absolute path -> the path as reported
    for given in paths:
        absolute = os.path.abspath(given)
        if os.path.isdir(given):
            if not (force_exclude and excluder.is_excluded_with_parents(Path(absolute), True)):
                for relative in _walk(Path(absolute), excluder):
                    found.setdefault(os.path.join(absolute, *relative),
                                     os.path.normpath(os.path.join(given, *relative)))
        elif os.path.isfile(given) and not _looks_like_python(given):
            warn(f"{given}: not a Python file (no .py or .ipynb suffix, no python shebang); skipped")
        elif not (force_exclude and excluder.is_excluded_with_parents(Path(absolute), False)):
            found.setdefault(absolute, os.path.normpath(given))
    return sorted(found.values(), key=_sort_key)


def _walk(root: Path, excluder: Excluder) -> Iterator[tuple[str, ...]]:
    """Relative paths (as tuples of names) of the Python files under ``root``, and of the
    folders that cannot be listed."""
    pending = [()]
    while pending:
        relative_folder = pending.pop()
        folder = root.joinpath(*relative_folder)
        try:
            entries = list(os.scandir(folder))
        except OSError:
            # Yielded so that reading it reports why: a folder silently skipped would pass.
            yield relative_folder
            continue
        for entry in entries:
            is_dir = entry.is_dir(follow_symlinks=False)
            if not is_dir and not entry.name.endswith(CHECKED_SUFFIXES):
                continue
            if excluder.is_excluded(folder / entry.name, is_dir):
                continue
            if is_dir:
                pending.append((*relative_folder, entry.name))
            else:
                # Includes symlinks and broken links named *.py: reading them reports the problem.
                yield (*relative_folder, entry.name)


def _looks_like_python(path: str) -> bool:
    if path.endswith(CHECKED_SUFFIXES):
        return True
    try:
        with open(path, "rb") as file:
            first_line = file.readline(256)
    except OSError:
        return True  # let reading report why it cannot be read
    return first_line.startswith(b"#!") and b"python" in first_line


def _sort_key(path: str) -> list[str]:
    """Folder by folder (``Path.parts`` order, without building a ``Path``)."""
    return path.split(os.sep)


def read_source(path: str, max_size: int = DEFAULT_MAX_FILE_SIZE) -> Union[bytes, FileError]:
    """The file's bytes, or a ``FileError`` saying in one line why it cannot be checked."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            return FileError(path, "broken symbolic link: its target does not exist")
        return FileError(path, "no such file or directory")
    except OSError as error:
        return _unreadable(path, error)
    if stat.S_ISDIR(info.st_mode):
        try:
            with os.scandir(path):
                pass
        except OSError as error:
            return _unreadable(path, error, "folder")
        return FileError(path, "is a directory, not a Python file")
    if not stat.S_ISREG(info.st_mode):
        return FileError(path, "not a regular file")
    if info.st_size > max_size:
        return FileError(path, f"file is {_size_text(info.st_size)}, over the limit of "
                               f"{_size_text(max_size)} (max-file-size)")
    try:
        with open(path, "rb") as file:
            source = file.read(max_size + 1)
    except OSError as error:
        return _unreadable(path, error)
    if len(source) > max_size:  # grew since stat
        return FileError(path, f"file is over the limit of {_size_text(max_size)} (max-file-size)")
    nul = source.find(b"\0")
    if nul != -1:
        line = source.count(b"\n", 0, nul) + 1
        column = nul - (source.rfind(b"\n", 0, nul) + 1)
        return FileError(path, "file contains a NUL byte: not a Python source file",
                         line=line, column=column)
    return source


def detect_encoding(source: bytes) -> str:
    """The encoding Python reads a source file's bytes with (BOM, PEP 263 cookie, else UTF-8);
    with a BOM, ``utf-8-sig`` (decoding drops it, encoding writes it back)."""
    import io
    import tokenize

    try:
        return tokenize.detect_encoding(io.BytesIO(source).readline)[0]
    except (SyntaxError, LookupError):
        return "utf-8"


def _unreadable(path: str, error: OSError, what: str = "file") -> FileError:
    reason = "permission denied" if isinstance(error, PermissionError) else error.strerror or error
    return FileError(path, f"cannot read {what}: {reason}")


def _size_text(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MiB"
    if size >= 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size} bytes"


def write_atomic(path: Union[str, os.PathLike[str]], data: bytes) -> None:
    """Replace the file's content so that a reader sees the old or the new file, never half of
    one: write a temporary file in the same folder, then ``os.replace`` it. The original's
    permission bits are kept; a symbolic link stays a link (its target is replaced)."""
    target = os.path.realpath(path)
    folder = os.path.dirname(target)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_current_umask()
    descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(target)}.",
                                             suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


def _current_umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask
