"""The library surface: check (or fix) paths, one file at a time, streaming results.

``check_paths`` discovers the files and resolves each one's settings; ``check_file`` is the unit
of work (read, then ``engine.check_source``); ``fix_paths``/``fix_file`` likewise, through
``fix.fix_source`` and an atomic write. A worker pool or a content-hash cache wraps
``check_file``: its argument, a ``FileTask``, is plain picklable, hashable data.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Iterator, Optional, Sequence, Union

from torchmemlint.cache import ResultCache
from torchmemlint.config import PathOptions, RuleSelection, Settings, SettingsResolver
from torchmemlint.diagnostics import Diagnostic, FileError, unexpected_error
from torchmemlint.files import Excluder, discover, read_source, write_atomic
from torchmemlint.notebooks import is_notebook, place_in_cells, read_notebook
from torchmemlint.rules import ALL_RULES, RULES_BY_CODE


@dataclass(frozen=True)
class FileTask:
    """One file to check, the rules to check it with (by code), and whether the output needs
    the fixes' edits."""

    path: str
    rule_codes: tuple[str, ...]
    max_file_size: int
    fix_edits: bool = True
    file_errors: bool = True  # report TML000 (False: ignored by its code)
    apply_noqa: bool = True  # False: report what ``# noqa`` comments would suppress
    config_error: str = ""  # the file's configuration is broken: it is not checked, and says why

    def config_failure(self) -> Optional[FileError]:
        return FileError(self.path, f"not checked: {self.config_error}") if self.config_error else None


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)

    @property
    def findings(self) -> list[Union[Diagnostic, FileError]]:
        """Diagnostics and errors together, in line order (in a notebook, cell and line order;
        errors first on a tie)."""
        return sorted([*self.errors, *self.diagnostics],
                      key=lambda f: (f.cell or 0, f.line, f.column, isinstance(f, Diagnostic), f.code))


def check_file(task: FileTask, cache: Optional[ResultCache] = None) -> FileResult:
    """One file's result; never raises: what goes wrong while checking it is one of its errors."""
    try:
        return _check_file(task, cache)
    except Exception as error:  # one file's failure must not stop the run
        return FileResult(task.path, errors=[unexpected_error(task.path, error)])


def _check_file(task: FileTask, cache: Optional[ResultCache]) -> FileResult:
    if task.config_error:
        return FileResult(task.path, errors=[task.config_failure()])
    source = read_source(task.path, task.max_file_size)
    if isinstance(source, FileError):
        return _reported(task, FileResult(task.path, errors=[source]))
    return check_bytes(task, source, cache)


def _reported(task: FileTask, result: FileResult) -> FileResult:
    """The result without its file errors where ``TML000`` is ignored."""
    if not task.file_errors:
        result.errors = []
    return result


def check_bytes(task: FileTask, source: bytes, cache: Optional[ResultCache] = None) -> FileResult:
    """``check_file`` on bytes already read (from the file, or from stdin for ``task.path``)."""
    return _reported(task, _check_bytes(task, source, cache))


def _check_bytes(task: FileTask, source: bytes, cache: Optional[ResultCache]) -> FileResult:
    key = None
    if cache is not None:
        key = cache.key(task, source)
        cached = cache.get(key)
        if cached is not None:
            return FileResult(task.path, *cached)
    rules = [RULES_BY_CODE[code] for code in task.rule_codes]
    if is_notebook(task.path):
        diagnostics, errors = _check_notebook(source, task.path, rules, task.apply_noqa)
    else:
        from torchmemlint import engine  # LibCST and the rules' machinery load only on a cache miss

        diagnostics, errors = engine.check_source(source, task.path, rules, apply_noqa=task.apply_noqa,
                                                  fix_edits=task.fix_edits)
    if key is not None:
        cache.put(key, diagnostics, errors)
    return FileResult(task.path, diagnostics, errors)


def _check_notebook(raw: bytes, path: str, rules: list, apply_noqa: bool = True,
                    ) -> tuple[list[Diagnostic], list[FileError]]:
    """A notebook's code cells checked as one source, each position given as a cell and a line
    in it; fixes say what they do, without their edits (positions in the joined cells)."""
    notebook = read_notebook(raw)
    if isinstance(notebook, str):
        return [], [FileError(path, notebook)]
    from torchmemlint import engine

    diagnostics, errors = engine.check_source(notebook.source, path, rules, apply_noqa=apply_noqa, fix_edits=False)
    return place_in_cells(diagnostics, errors, notebook.locate)


def plan(
    paths: Sequence[str],
    *,
    select: Optional[Sequence[str]] = None,
    extend_select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    config: Optional[str] = None,
    force_exclude: bool = False,
    fix_edits: bool = True,
    path_options: PathOptions = PathOptions(),
    stdin_filename: Optional[str] = None,
    ignore_noqa: bool = False,
) -> Iterator[FileTask]:
    """The files under ``paths`` to check, each with its rules, in a deterministic order.

    ``select``/``extend_select``/``ignore`` are the command line's rule selectors, applied on top
    of each file's configuration; ``config`` replaces the search for ``pyproject.toml`` files;
    ``path_options`` the command line's exclusions and per-file ignores.
    ``fix_edits=False``: the results' fixes come without their edits; ``ignore_noqa``: ``# noqa``
    comments suppress nothing. With ``stdin_filename``
    the one task is for code read from stdin, checked as if it were that file (``paths`` is not
    searched; with ``force_exclude`` an excluded name gives no task). Raises ``UsageError`` for
    a bad selector or configuration.
    """
    resolver = _resolver(select, extend_select, ignore, config, path_options)
    excluder = Excluder(resolver.settings_for, respect_gitignore=path_options.respect_gitignore)
    if stdin_filename is not None:
        excluded = force_exclude and excluder.is_excluded_with_parents(
            Path(os.path.abspath(stdin_filename)), False)
        found = [] if excluded else [stdin_filename]
    else:
        found = discover(paths, excluder, force_exclude)
    for path in found:
        settings = resolver.settings_for_file(path)
        yield FileTask(path, tuple(rule.code for rule in settings.rules_for(path)),
                       settings.max_file_size, fix_edits, settings.reports_file_errors(path), not ignore_noqa,
                       settings.error)


def _resolver(select: Optional[Sequence[str]], extend_select: Sequence[str], ignore: Sequence[str],
              config: Optional[str], path_options: PathOptions) -> SettingsResolver:
    return SettingsResolver(
        ALL_RULES,
        RuleSelection(select=None if select is None else tuple(select),
                      extend_select=tuple(extend_select), ignore=tuple(ignore)),
        config_path=config,
        path_options=path_options,
    )


def settings_for_file(path: str, *, select: Optional[Sequence[str]] = None, extend_select: Sequence[str] = (),
                      ignore: Sequence[str] = (), config: Optional[str] = None,
                      path_options: PathOptions = PathOptions(), **_ignored) -> Settings:
    """The settings ``plan`` checks ``path`` with (``check --show-settings``)."""
    return _resolver(select, extend_select, ignore, config, path_options).settings_for_file(path)


def check_paths(paths: Sequence[str], *, jobs: int = 1, cache: Optional[ResultCache] = None,
                **options) -> Iterator[FileResult]:
    """Check every file under ``paths`` (options as for ``plan``), yielding one result per file
    in ``plan``'s order as soon as it and those before it are checked; see ``check_tasks``."""
    return check_tasks(list(plan(paths, **options)), jobs=jobs, cache=cache)


def check_tasks(tasks: Sequence[FileTask], *, jobs: int = 1,
                cache: Optional[ResultCache] = None) -> Iterator[FileResult]:
    """Results of ``tasks`` in their order, from ``jobs`` worker processes (1: in this process).

    Results stream: each is yielded once it and every earlier one are done, and only one file's
    tree per worker is alive at a time. With a cache, unchanged files are answered from it
    without starting workers or loading LibCST."""
    pending: list[tuple[int, FileTask]] = []
    results: list[Optional[FileResult]] = []
    for task in tasks:
        result = _cached(task, cache) if cache is not None else None
        if result is None:
            pending.append((len(results), task))
        results.append(result)
    checked = _run(pending, jobs, cache)
    for index, result in enumerate(results):
        if result is None:
            result = next(checked)
        results[index] = None  # keep nothing already yielded
        yield result


def _cached(task: FileTask, cache: ResultCache) -> Optional[FileResult]:
    source = read_source(task.path, task.max_file_size)
    if isinstance(source, FileError):
        return None  # the worker reports it
    entry = cache.get(cache.key(task, source))
    return _reported(task, FileResult(task.path, *entry)) if entry is not None else None


def _run(pending: list[tuple[int, FileTask]], jobs: int, cache: Optional[ResultCache]) -> Iterator[FileResult]:
    return _pool_map(partial(check_file, cache=cache), [task for _, task in pending], jobs)


def _pool_map(work, tasks: list[FileTask], jobs: int) -> Iterator:
    """``work`` of each task, in order, from ``jobs`` worker processes (1: in this process)."""
    if jobs <= 1 or len(tasks) <= 1:
        yield from (work(task) for task in tasks)
        return
    import multiprocessing

    # Forked workers start with this process's modules already imported.
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin" else None
    context = multiprocessing.get_context(method)
    workers = min(jobs, len(tasks))
    with context.Pool(workers) as pool:
        # Small chunks keep the workers evenly loaded (file costs differ a hundredfold).
        yield from pool.imap(work, tasks, chunksize=max(1, min(8, len(tasks) // (workers * 16))))


@dataclass
class FileFix:
    """The outcome of fixing one file: its bytes before and after, the diagnostics whose fixes
    were applied, and what ``check`` still reports on the result (as a ``FileResult``)."""

    path: str
    original: bytes
    fixed: bytes
    encoding: str
    applied: list[Diagnostic]
    remaining: FileResult
    # What remains, positioned on ``original`` (``remaining`` is positioned on ``fixed``); None
    # where nothing was fixed, so that both are the same.
    unfixed: Optional[list[Diagnostic]] = None

    @property
    def unfixed_on_original(self) -> list[Diagnostic]:
        return self.unfixed if self.unfixed is not None else self.remaining.diagnostics

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


def fix_file(task: FileTask, unsafe: bool = False, write: bool = True) -> FileFix:
    """Fix one file (the safe fixes; the unsafe ones too with ``unsafe``) and, with ``write``,
    replace it atomically when something changed. Never raises for a bad file: the problem is
    one of the remaining result's errors and the file is left as it was."""
    try:
        return _fix_file(task, unsafe, write)
    except Exception as error:  # one file's failure must not stop the run
        return FileFix(task.path, b"", b"", "utf-8", [], FileResult(task.path, errors=[unexpected_error(task.path, error)]))


def _fix_file(task: FileTask, unsafe: bool, write: bool) -> FileFix:
    if task.config_error:
        return FileFix(task.path, b"", b"", "utf-8", [], FileResult(task.path, errors=[task.config_failure()]))
    source = read_source(task.path, task.max_file_size)
    if isinstance(source, FileError):
        return FileFix(task.path, b"", b"", "utf-8", [], _reported(task, FileResult(task.path, errors=[source])))
    outcome = fix_bytes(task, source, unsafe)
    if write and outcome.changed:
        try:
            write_atomic(task.path, outcome.fixed)
        except OSError as error:
            unfixed = check_file(task)  # the file as it still is
            unfixed.errors.append(FileError(task.path, f"cannot write the fixed file: {error.strerror or error}"))
            return FileFix(task.path, source, source, outcome.encoding, [], _reported(task, unfixed))
    return outcome


def fix_bytes(task: FileTask, source: bytes, unsafe: bool = False) -> FileFix:
    """``fix_file`` on bytes already read, writing nothing (stdin's fixed code goes to stdout)."""
    from torchmemlint import fix  # LibCST loads only when something is to be fixed

    rules = [RULES_BY_CODE[code] for code in task.rule_codes]
    fix_one = fix.fix_notebook if is_notebook(task.path) else fix.fix_source
    result = fix_one(source, task.path, rules, unsafe)
    return FileFix(task.path, source, result.source, result.encoding, result.applied,
                   _reported(task, FileResult(task.path, result.remaining, result.errors)), result.unfixed)


def fix_paths(paths: Sequence[str], unsafe: bool = False, write: bool = True, *, jobs: int = 1,
              cache: Optional[ResultCache] = None, **options) -> Iterator[FileFix]:
    """Fix every file under ``paths`` (options as for ``plan``), yielding one outcome per file in
    ``plan``'s order, from ``jobs`` worker processes as ``check_tasks`` does. A file whose
    cached check result (``check``'s, or an earlier ``fix``'s) has no fix to apply is answered
    from the cache, without parsing it."""
    tasks = list(plan(paths, **options))
    pending: list[FileTask] = []
    outcomes: list[Optional[FileFix]] = []
    for task in tasks:
        outcome = _nothing_to_fix(task, cache, unsafe) if cache is not None else None
        if outcome is None:
            pending.append(task)
        outcomes.append(outcome)
    fixed = _pool_map(partial(_fix_and_remember, unsafe=unsafe, write=write, cache=cache), pending, jobs)
    for index, outcome in enumerate(outcomes):
        if outcome is None:
            outcome = next(fixed)
        outcomes[index] = None
        yield outcome


def _nothing_to_fix(task: FileTask, cache: ResultCache, unsafe: bool) -> Optional[FileFix]:
    """The file as it is, if its cached result (the one without fixes' edits, as ``check``
    stores it) holds no fix that would apply."""
    lookup = replace(task, fix_edits=False)
    source = read_source(task.path, task.max_file_size)
    if isinstance(source, FileError):
        return None
    entry = cache.get(cache.key(lookup, source))
    if entry is None or any(d.fix is not None and (d.fix.safe or unsafe) for d in entry[0]):
        return None
    return FileFix(task.path, source, source, "utf-8", [], FileResult(task.path, *entry))


def _fix_and_remember(task: FileTask, unsafe: bool, write: bool, cache: Optional[ResultCache]) -> FileFix:
    """``fix_file``, and the result of a file left with nothing to fix stored as ``check``
    would store it, so that the next ``fix`` (or ``check``) of it is a cache hit."""
    outcome = fix_file(task, unsafe, write)
    remaining = outcome.remaining
    if cache is not None and outcome.fixed and not remaining.errors and (write or not outcome.changed) and \
            not any(d.fix is not None and (d.fix.safe or unsafe) for d in remaining.diagnostics):
        without_edits = [replace(d, fix=replace(d.fix, edits=())) if d.fix else d for d in remaining.diagnostics]
        cache.put(cache.key(replace(task, fix_edits=False), outcome.fixed), without_edits, [])
    return outcome
