"""The command line: argument parsing and exit statuses only; the work is done by ``api``.

Each subcommand is one function decorated with ``@subcommand(name, help, *arguments)``: it gets
the parsed arguments and returns the exit status. Linting never imports torch.

Exit statuses: 0 nothing found, 1 findings (every file checked), 2 usage, configuration or
internal error, or some file could not be checked (a ``TML000`` line: unreadable, does not
parse, nested too deeply, governed by a broken configuration), findings or not.
"""
from __future__ import annotations

import argparse
import gc
import importlib
import importlib.util
import io
import os
import re
import sys
import types
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence, TextIO


class _LazyModule(types.ModuleType):
    """Stands in for a module until one of its attributes is used, then imports it for real
    and becomes a view of it (``import name as alias`` elsewhere keeps working unchanged)."""

    def __getattr__(self, attribute: str) -> Any:
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        module = importlib.import_module(self.__name__)
        self.__dict__.update(module.__dict__)
        return getattr(module, attribute)


def _import_lazily(name: str) -> None:
    """Make ``import name`` instant; the module loads on first use of one of its attributes.

    LibCST takes longer to import than a whole warm-cache run, and files the pre-screen turns
    away never need it; the rules import it at the top but use it only when they run. (The
    standard library's ``importlib.util.LazyLoader`` cannot do this on Python 3.11: the
    ``import libcst`` statement itself reads ``__spec__`` of the module and so loads it.)"""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None:
        return
    module = _LazyModule(name)
    module.__spec__ = spec  # what the import system reads of a module already in sys.modules
    sys.modules[name] = module


_import_lazily("libcst")

from torchmemlint import __version__, api  # noqa: E402  (after LibCST is made lazy)
from torchmemlint.api import FileResult  # noqa: E402
from torchmemlint.cache import ResultCache  # noqa: E402
from torchmemlint.config import PathOptions, UsageError, format_settings  # noqa: E402
from torchmemlint.files import detect_encoding, write_atomic  # noqa: E402
from torchmemlint.notebooks import is_notebook  # noqa: E402
from torchmemlint.report import REPORTERS, TEXT_FORMATS, reporter_for  # noqa: E402
from torchmemlint.diagnostics import FileError  # noqa: E402
from torchmemlint.report.base import (FILE_ERROR_DOCS, FILE_ERROR_MESSAGE, FILE_ERROR_NAME,  # noqa: E402
                                      ReportOptions, Tally, read_file, rule_docs)
from torchmemlint.diagnostics import DEBUG_VARIABLE  # noqa: E402
from torchmemlint.report.progress import FileProgress, progress_wanted  # noqa: E402
from torchmemlint.report.fixes import FixTally, format_applied_fixes, format_fix_summary  # noqa: E402
from torchmemlint.report.text import format_fixable, format_statistics, format_summary, plural  # noqa: E402
from torchmemlint.rules import ALL_RULES  # noqa: E402

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2


@dataclass(frozen=True)
class Argument:
    names: tuple[str, ...]
    options: dict[str, Any]


def argument(*names: str, **options: Any) -> Argument:
    """What ``parser.add_argument(*names, **options)`` gets, kept for a subcommand."""
    return Argument(names, options)


@dataclass(frozen=True)
class Subcommand:
    name: str
    help: str
    arguments: tuple[Argument, ...]
    run: Callable[[argparse.Namespace], int]


SUBCOMMANDS: list[Subcommand] = []


def subcommand(name: str, help: str, *arguments: Argument):
    def register(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        SUBCOMMANDS.append(Subcommand(name, help, arguments, run))
        return run
    return register


@contextmanager
def _rare_garbage_collection() -> Iterator[None]:
    """Parsing allocates millions of short-lived objects that reference counting frees; with
    the cyclic collector's default thresholds it still rescans them about 2,000 times per 1,000
    files, a tenth of a run (measured on the benchmark's files). While files are checked, it
    collects rarely and leaves the objects already alive (the imports) out; then as before.
    The middle generation is scanned only every 1,000 young collections: what survives a
    young collection is almost always the tree of the file being checked, still in use, and
    scanning it again found nothing to free (one 64k-line function: a 1.3 s scan, 0 objects
    freed; the whole run's peak memory on 29 repositories was the same)."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, 1000, 100)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


def _cpu_count() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _code_list(text: str) -> list[str]:
    return [code.strip() for code in text.split(",") if code.strip()]


def _per_file_ignores(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """``GLOB:CODES`` entries, separated by spaces or newlines (flake8's spelling), each with
    comma-separated codes: ``tests/**:TML001,TML004 scripts/*.py:TML``."""
    entries = []
    for entry in text.split():
        glob, separator, codes = entry.rpartition(":")
        if not separator or not glob or not _code_list(codes):
            raise argparse.ArgumentTypeError(f"expected GLOB:CODES (e.g. 'tests/**:TML001'), got {entry!r}")
        entries.append((glob, tuple(_code_list(codes))))
    return entries


STDIN_PATH = "-"  # ruff's and flake8's name for standard input among the paths
PATHS_ARGUMENT = argument("paths", nargs="*", default=[], metavar="PATH",
                          help="files or folders to check (default: the current folder; - for stdin)")
# Shared by every subcommand that lints files, so they select files and rules the same way.
SELECTION_ARGUMENTS = (
    argument("--select", type=_code_list, action="extend", metavar="CODES",
             help="comma-separated rule codes or prefixes to enable instead of the configured "
                  "ones (rules that are off by default need their full code)"),
    argument("--extend-select", type=_code_list, action="extend", default=[], metavar="CODES",
             help="rule codes or prefixes to enable in addition"),
    argument("--ignore", type=_code_list, action="extend", default=[], metavar="CODES",
             help="rule codes or prefixes to disable"),
    argument("--config", metavar="PATH",
             help="use this pyproject.toml instead of the nearest one above each file"),
    argument("--exclude", type=_code_list, action="extend", default=None, metavar="GLOBS",
             help="comma-separated path patterns to exclude, instead of the configured ones and "
                  "the defaults (relative to the working directory)"),
    argument("--extend-exclude", type=_code_list, action="extend", default=[], metavar="GLOBS",
             help="path patterns to exclude in addition"),
    argument("--per-file-ignores", type=_per_file_ignores, action="extend", default=None,
             metavar="GLOB:CODES",
             help="rules to ignore in matching files, instead of the configured per-file-ignores "
                  "(e.g. 'tests/**:TML001,TML004 notebooks/*:TML')"),
    argument("--extend-per-file-ignores", type=_per_file_ignores, action="extend", default=[],
             metavar="GLOB:CODES", help="rules to ignore in matching files, in addition to the configured ones"),
    argument("--respect-gitignore", dest="respect_gitignore", action="store_true", default=True,
             help="skip what .gitignore files and .git/info/exclude ignore (the default)"),
    argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false",
             help="check files git ignores too"),
    argument("--isolated", action="store_true", help="read no configuration file: the defaults and the command line"),
    argument("--force-exclude", action="store_true",
             help="apply the exclusions to files named on the command line too (for pre-commit)"),
)
STDIN_FILENAME_ARGUMENT = argument(
    "--stdin-filename", metavar="PATH",
    help="the name of the code read from stdin: its settings and the name in the output")


# Shared by check and fix: worker processes and the result cache.
SCALE_ARGUMENTS = (
    argument("-j", "--jobs", type=_positive_int, default=None, metavar="N",
             help="worker processes (default: one per CPU core; 1 works in this process)"),
    argument("-n", "--no-cache", action="store_true",
             help="neither read nor write the result cache (.torchmemlint_cache/ in the project root)"),
    argument("--cache-dir", metavar="PATH",
             help="keep the result cache here instead of .torchmemlint_cache/ in the project root "
                  "(the nearest folder above the working directory with pyproject.toml or .git)"),
)


def _cache(args: argparse.Namespace) -> Optional[ResultCache]:
    if args.no_cache:
        return None
    return ResultCache(Path(args.cache_dir)) if args.cache_dir else ResultCache.for_project()


def selection_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of ``api.plan`` from ``SELECTION_ARGUMENTS``."""
    per_file_ignores = None if args.per_file_ignores is None else tuple(args.per_file_ignores)
    if args.isolated and args.config:
        raise UsageError("--isolated reads no configuration file: it cannot be combined with --config")
    return {"select": args.select, "extend_select": args.extend_select, "ignore": args.ignore,
            "config": args.config, "force_exclude": args.force_exclude,
            "path_options": PathOptions(
                exclude=None if args.exclude is None else tuple(args.exclude),
                extend_exclude=tuple(args.extend_exclude), per_file_ignores=per_file_ignores,
                extend_per_file_ignores=tuple(args.extend_per_file_ignores),
                respect_gitignore=args.respect_gitignore, isolated=args.isolated)}


def _paths(args: argparse.Namespace) -> list[str]:
    return args.paths or ["."]


def _reads_stdin(args: argparse.Namespace) -> bool:
    """``-`` among the paths, or ``--stdin-filename`` without paths (as ruff)."""
    if STDIN_PATH in args.paths:
        if args.paths != [STDIN_PATH]:
            raise UsageError("- (stdin) cannot be checked together with other paths")
        return True
    return args.stdin_filename is not None and not args.paths


def _stdin_task(args: argparse.Namespace, **options: Any) -> Optional[api.FileTask]:
    """The task for the code on stdin (None: its name is excluded and --force-exclude given)."""
    tasks = list(api.plan([], stdin_filename=args.stdin_filename or STDIN_PATH,
                          **selection_options(args), **options))
    return tasks[0] if tasks else None


def _read_stdin() -> bytes:
    return sys.stdin.buffer.read()


def _write_stdout_bytes(data: bytes) -> None:
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def _use_color(choice: str, stream: TextIO) -> bool:
    """``--color``: always, never, or (auto) on a terminal unless ``NO_COLOR`` is set
    (no-color.org) or the terminal is dumb; ``FORCE_COLOR`` turns it on (as ruff)."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return stream.isatty() and os.environ.get("TERM") != "dumb"


OUTPUT_ARGUMENTS = (
    argument("--output-format", "--format", dest="output_format", choices=tuple(REPORTERS),
             default=None, help="output format: concise (the default; text is the same), full "
                                "(concise with the source and a caret under each finding), json, "
                                "sarif, github (default: concise)"),
    argument("--show-source", dest="show_source", action="store_true", default=None,
             help="show the source around each finding (the full output format)"),
    argument("--no-show-source", dest="show_source", action="store_false",
             help="one line per finding (the concise output format)"),
    argument("--color", choices=("auto", "always", "never"), default="auto",
             help="colour the text output: on a terminal unless NO_COLOR is set (auto), always "
                  "or never (default: auto)"),
    argument("-o", "--output-file", metavar="PATH", help="write the findings to this file instead of stdout"),
    argument("-q", "--quiet", action="store_true", help="print the findings and nothing else (no summary)"),
    argument("-s", "--silent", action="store_true", help="print nothing; only the exit status tells"),
)


def _output_format(args: argparse.Namespace) -> str:
    if args.show_source is not None and args.output_format in (None, *TEXT_FORMATS):
        return "full" if args.show_source else "concise"
    return args.output_format or "concise"


@contextmanager
def _output(args: argparse.Namespace) -> Iterator[TextIO]:
    """Where the findings go: stdout, ``--output-file``, or nowhere (``--silent``)."""
    if args.silent:
        yield io.StringIO()
    elif args.output_file:
        try:
            stream = open(args.output_file, "w", encoding="utf-8")
        except OSError as error:
            raise UsageError(f"--output-file {args.output_file}: {error.strerror or error}") from None
        with stream:
            yield stream
    else:
        yield sys.stdout


def _summary(args: argparse.Namespace, *lines: Optional[str]) -> None:
    """What goes to stderr after the findings, unless ``-q``/``-s``."""
    if args.quiet or args.silent:
        return
    for line in lines:
        if line:
            print(line, file=sys.stderr)


@subcommand(
    "check", "report memory antipatterns in Python files",
    PATHS_ARGUMENT,
    *SELECTION_ARGUMENTS,
    STDIN_FILENAME_ARGUMENT,
    *OUTPUT_ARGUMENTS,
    argument("-e", "--exit-zero", action="store_true", help="exit with status 0 even when there are findings"),
    argument("--statistics", action="store_true",
             help="count the findings per rule code, with [*] where `fix` can fix them"),
    argument("--ignore-noqa", action="store_true", help="report what `# noqa` comments would suppress"),
    argument("--fix", action="store_true", help="apply the safe fixes, then report what remains"),
    argument("--no-fix", dest="fix", action="store_false", help="report only (the default)"),
    argument("--fix-only", action="store_true",
             help="apply the safe fixes and report nothing of what remains (exit 0 unless a file cannot be checked)"),
    argument("--show-fixes", action="store_true", help="with --fix: list the fixes applied, per file and rule"),
    argument("--exit-non-zero-on-fix", action="store_true", help="with --fix: exit 1 when something was fixed"),
    argument("--unsafe-fixes", action="store_true",
             help="count unsafe fixes as fixes: [*] and the counts include them, --fix applies them"),
    argument("--diff", action="store_true",
             help="print the fixes as a unified diff and write nothing (as `fix --diff`)"),
    argument("--add-noqa", action="store_true",
             help="add `# noqa: CODE` on the line of every finding (merged with an existing "
                  "noqa comment), write the files, report nothing else"),
    argument("--show-files", action="store_true", help="list the files that would be checked, and exit"),
    argument("--show-settings", action="store_true",
             help="print the settings the first file would be checked with, and exit"),
    *SCALE_ARGUMENTS,
)
def check(args: argparse.Namespace) -> int:
    if args.show_files or args.show_settings:
        return _show_files_or_settings(args)
    if args.add_noqa:
        return _add_noqa(args)
    if args.fix or args.diff or args.fix_only:
        return _fix(args, diff=args.diff)
    with _rare_garbage_collection():
        return _check(args)


def _check(args: argparse.Namespace) -> int:
    output_format = _output_format(args)
    stdin = _reads_stdin(args)
    source = _read_stdin() if stdin else None
    tally = Tally(unsafe_fixes=args.unsafe_fixes)
    with _output(args) as stream:
        options = ReportOptions(
            unsafe_fixes=args.unsafe_fixes,
            color=output_format in TEXT_FORMATS and _use_color(args.color, stream),
            read=(lambda path: source) if stdin else read_file)
        reporter = reporter_for(output_format, stream, options)
        if stdin:
            task = _stdin_task(args, fix_edits=reporter.shows_fix_edits, ignore_noqa=args.ignore_noqa)
            tasks = [task] if task else []
            results: Iterator[FileResult] = iter([api.check_bytes(task, source)] if task else [])
        else:
            tasks = list(api.plan(_paths(args), fix_edits=reporter.shows_fix_edits, ignore_noqa=args.ignore_noqa,
                                  **selection_options(args)))
            results = api.check_tasks(tasks, jobs=args.jobs or _cpu_count(), cache=_cache(args))
        progress = FileProgress(sys.stderr, len(tasks), progress_wanted(sys.stderr, args.quiet or args.silent))
        try:
            for result in results:
                tally.add(result)
                if progress.showing and (result.diagnostics or result.errors):
                    progress.erase()  # the findings go where the line was (stdout and stderr share the terminal)
                    reporter.add(result)
                    stream.flush()
                    progress.redraw()
                else:
                    reporter.add(result)
                progress.advance()
        finally:
            progress.erase()
        reporter.finish()
        if not tally.files:
            return EXIT_CLEAN  # e.g. an empty pre-commit run: nothing to say
        # Text output keeps stdout to the finding lines (as flake8's) and the summary on stderr;
        # the other formats keep stdout one machine-readable document.
        if args.statistics and tally.total and not args.silent:
            print(format_statistics(tally), file=stream if output_format in TEXT_FORMATS else sys.stderr)
    if output_format in TEXT_FORMATS:
        _summary(args, format_summary(tally), format_fixable(tally))
    if tally.unchecked:
        return EXIT_ERROR  # (--exit-zero too: a file that could not be checked is no clean result)
    return EXIT_FINDINGS if tally.total and not args.exit_zero else EXIT_CLEAN


def _show_files_or_settings(args: argparse.Namespace) -> int:
    """``--show-files``: the files ``check`` would check, one a line; ``--show-settings``: the
    settings of the first of them (ruff's options of the same names)."""
    if _reads_stdin(args):
        tasks = [task for task in [_stdin_task(args)] if task is not None]
    else:
        tasks = list(api.plan(_paths(args), **selection_options(args)))
    if args.show_files:
        for task in tasks:
            print(os.path.abspath(task.path))
        return EXIT_CLEAN
    if not tasks:
        raise UsageError("--show-settings: no file to check under the given paths")
    settings = api.settings_for_file(tasks[0].path, **selection_options(args))
    print(format_settings(tasks[0].path, settings))
    return EXIT_CLEAN


def _add_noqa(args: argparse.Namespace) -> int:
    from torchmemlint.noqa import add_noqa

    if _reads_stdin(args):
        raise UsageError("--add-noqa writes files: it cannot read stdin")
    added = files = 0
    for result in api.check_paths(_paths(args), jobs=args.jobs or _cpu_count(), fix_edits=False,
                                  **selection_options(args)):
        if not result.diagnostics:
            continue
        if is_notebook(result.path):
            print(f"{result.path}: --add-noqa does not rewrite notebooks; its "
                  f"{plural(len(result.diagnostics), 'finding')} remain", file=sys.stderr)
            continue
        raw = read_file(result.path)
        if raw is None:
            continue
        encoding = detect_encoding(raw)
        outcome = add_noqa(raw.decode(encoding), [(d.line, d.code) for d in result.diagnostics])
        for line in outcome.skipped:
            print(f"{result.path}:{line}: no `# noqa` added: the line ends inside a string",
                  file=sys.stderr)
        if outcome.added:
            write_atomic(result.path, outcome.text.encode(encoding))
            added += outcome.added
            files += 1
    _summary(args, f"Added {plural(added, 'noqa directive')} in {plural(files, 'file')}.")
    return EXIT_CLEAN


@subcommand(
    "fix", "apply the fixes of the findings (the safe ones; all with --unsafe-fixes)",
    PATHS_ARGUMENT,
    *SELECTION_ARGUMENTS,
    STDIN_FILENAME_ARGUMENT,
    *OUTPUT_ARGUMENTS,
    argument("--unsafe-fixes", action="store_true",
             help="also apply unsafe fixes, which may change what the program computes "
                  "(`torchmemlint explain CODE` says why)"),
    argument("--diff", action="store_true",
             help="print a unified diff of the fixes and write nothing; exit 1 if there would be "
                  "changes (2 if a file cannot be checked)"),
    argument("--show-fixes", action="store_true", help="list the fixes applied, per file and rule"),
    *SCALE_ARGUMENTS,
)
def fix(args: argparse.Namespace) -> int:
    return _fix(args, diff=args.diff)


def _fix(args: argparse.Namespace, diff: bool) -> int:
    """``fix``, and ``check --fix`` / ``check --diff``: the remaining findings (or, with
    ``diff``, the patch) go to the output; the summary to stderr. From stdin, the fixed code
    goes to stdout and the remaining findings to stderr (as ruff). Under the same garbage
    collection as ``check`` (fixing re-checks and re-parses each file: 40 % of its time was
    collections on a 16k-line file)."""
    with _rare_garbage_collection():
        return _fixing(args, diff)


def _fixing(args: argparse.Namespace, diff: bool) -> int:
    from torchmemlint.fix import review_diff  # the engine loads only when something is fixed

    stdin = _reads_stdin(args)
    fix_only = getattr(args, "fix_only", False)  # (check's option)
    tally = FixTally()
    stdin_outcomes: list[api.FileFix] = []
    if stdin:
        source = _read_stdin()
        task = _stdin_task(args)
        if task is None:  # excluded: the code passes through unchanged
            _write_stdout_bytes(source)
        else:
            stdin_outcomes.append(api.fix_bytes(task, source, args.unsafe_fixes))
    with _output(args) as stream:
        findings_stream = sys.stderr if stdin and not diff else stream
        output_format = _output_format(args)
        # What remains is positioned in the fixed code: snippets of stdin's code show that.
        options = ReportOptions(color=output_format in TEXT_FORMATS and _use_color(args.color, findings_stream),
                                read=(lambda path: stdin_outcomes[0].fixed) if stdin_outcomes else read_file)
        reporter = reporter_for(output_format, findings_stream, options)
        if stdin:
            outcomes: Iterator[api.FileFix] = iter(stdin_outcomes)
        else:
            outcomes = api.fix_paths(_paths(args), unsafe=args.unsafe_fixes, write=not diff,
                                     jobs=args.jobs or _cpu_count(), cache=_cache(args), **selection_options(args))
        for outcome in outcomes:
            tally.add(outcome)
            if diff:
                # A patch laid out for review: the findings above each hunk, then those left
                # alone and why.
                stream.write(review_diff(outcome.path, outcome.original, outcome.fixed, outcome.applied,
                                         outcome.unfixed_on_original, args.unsafe_fixes, outcome.encoding))
                reporter.add(FileResult(outcome.path, errors=outcome.remaining.errors))
            else:
                if not fix_only:
                    reporter.add(outcome.remaining)
                if stdin:
                    _write_stdout_bytes(outcome.fixed)
        reporter.finish()
    if not tally.files:
        return EXIT_CLEAN
    if getattr(args, "show_fixes", False) and not args.silent:
        print(format_applied_fixes(tally, diff), file=sys.stderr if diff or stdin else sys.stdout)
    _summary(args, format_fix_summary(tally, diff, args.unsafe_fixes))
    if tally.errors:
        return EXIT_ERROR  # a file that could not be checked (or a fix skipped as unsafe)
    if diff:
        return EXIT_FINDINGS if tally.changed_files or tally.errors else EXIT_CLEAN
    if getattr(args, "exit_non_zero_on_fix", False) and tally.applied:
        return EXIT_FINDINGS
    if fix_only:
        return EXIT_FINDINGS if tally.errors else EXIT_CLEAN
    return EXIT_FINDINGS if tally.remaining and not getattr(args, "exit_zero", False) else EXIT_CLEAN


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "kib": 2**10, "m": 10**6, "mb": 10**6, "mib": 2**20,
               "g": 10**9, "gb": 10**9, "gib": 2**30, "t": 10**12, "tb": 10**12, "tib": 2**40}


def _size(text: str) -> int:
    """A byte count: ``4GiB``, ``512MiB``, ``2G``, ``1000000``."""
    match = _SIZE.match(text)
    unit = (match.group(2) or "").lower() if match else ""
    if match is None or unit not in _SIZE_UNITS:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 4GiB, 512MiB)")
    return int(float(match.group(1)) * _SIZE_UNITS[unit])


def _positive(kind: type) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = 0
        if value <= 0:
            raise argparse.ArgumentTypeError(f"not a positive number: {text!r}")
        return value
    return parse


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"not a number of iterations: {text!r}")
    return int(text)


# `verify SCRIPT -- ARGS`: what follows the first `--` goes to the replayed scripts untouched.
SCRIPT_ARGUMENTS_SEPARATOR = "--"


@subcommand(
    "verify", "replay the code around each finding and measure what it costs (needs PyTorch); "
              "arguments after `--` go to the scripts",
    argument("paths", nargs="+", metavar="PATH", help="scripts, or folders of scripts, to check and replay"),
    *SELECTION_ARGUMENTS,
    argument("--iterations", type=_positive(int), default=8, metavar="N",
             help="measured iterations of the loop around each finding (default: 8)"),
    argument("--warmup", type=_count, default=2, metavar="N",
             help="iterations run before measuring (default: 2)"),
    argument("--timeout", type=_positive(float), default=120.0, metavar="SECONDS",
             help="wall-clock limit of each replay (default: 120)"),
    argument("--memory-limit", type=_size, default=4 * 2**30, metavar="SIZE",
             help="memory each replay, all its processes together, may take beyond its footprint at the "
                  "start (default: 4GiB)"),
    argument("--copy-limit", type=_size, metavar="SIZE",
             help="how much of each script's folder is copied for its replays; files beyond it are left out "
                  "(default: 64MiB)"),
    argument("--yes", "-y", action="store_true",
             help="run the scripts without asking (also: TORCHMEMLINT_VERIFY_YES=1)"),
    argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
             help="replay on CUDA when available (auto), or hide the GPUs (cpu) (default: auto)"),
    argument("--seed", type=int, default=0, help="seed of random, numpy and torch in every replay (default: 0)"),
    argument("--format", choices=("text", "json"), default="text", help="output format (default: text)"),
    argument("--plot", metavar="PNG", help="also draw live memory per iteration, original against fixed twin"),
    argument("--twin", metavar="FIXED.py",
             help="a fixed copy of the (one) script: the twin of the findings that have no fix of their own"),
    argument("--nproc-per-node", type=_positive(int), metavar="N",
             help="replay under torchrun with N ranks (NCCL on CUDA, gloo on the CPU: the script's own "
                  "init_process_group); report each rank and the ranks combined"),
)
def verify(args: argparse.Namespace) -> int:
    from torchmemlint.verify.requirements import plot_problem, torch_problem

    # Before any replay: a missing dependency found after minutes of replays wastes them.
    problem = torch_problem() or (plot_problem() if args.plot else None)
    if problem:
        raise UsageError(problem)
    from torchmemlint.verify import Limits, ReplayError, Settings, verify_paths
    from torchmemlint.verify.consent import confirm
    from torchmemlint.verify.output import ProgressLine, write_json, write_table

    limits = Limits(timeout_s=args.timeout, memory_limit=args.memory_limit, device=args.device, seed=args.seed,
                    **({"copy_limit": args.copy_limit} if args.copy_limit else {}))
    settings = Settings(args.iterations, args.warmup, tuple(args.script_args), limits)
    if args.nproc_per_node:
        return _verify_distributed(args, settings)
    progress = ProgressLine(sys.stderr)
    try:
        results, errors = verify_paths(
            args.paths, settings, progress, twin=args.twin,
            confirm=lambda files: confirm(files, settings, args.yes, sys.stdin, sys.stderr),
            **selection_options(args))
    except ReplayError as error:
        raise UsageError(f"cannot replay: {error}") from None
    finally:
        progress.close()
    for error in errors:
        print(f"{error.path}:{error.line}:{error.column + 1}: {error.code} {error.message}", file=sys.stderr)
    if args.format == "json":
        write_json(results, sys.stdout)
    else:
        write_table(results, sys.stdout)
    if args.plot:
        from torchmemlint.verify.plot import write_plot

        write_plot(results, args.plot)
    confirmed = any(result.verdict.startswith("confirmed") for result in results)
    return EXIT_FINDINGS if confirmed or errors else EXIT_CLEAN


def _verify_distributed(args: argparse.Namespace, settings: Any) -> int:
    from torchmemlint.verify import ReplayError
    from torchmemlint.verify import distributed
    from torchmemlint.verify.consent import confirm
    from torchmemlint.verify.output import ProgressLine

    if args.plot:
        raise UsageError("--plot draws single-process replays; it is not drawn with --nproc-per-node")
    progress = ProgressLine(sys.stderr)
    try:
        results, errors = distributed.verify_distributed(
            args.paths, settings, args.nproc_per_node, progress, twin=args.twin,
            confirm=lambda files: confirm(files, settings, args.yes, sys.stdin, sys.stderr), **selection_options(args))
    except ReplayError as error:
        raise UsageError(f"cannot replay: {error}") from None
    finally:
        progress.close()
    for error in errors:
        print(f"{error.path}:{error.line}:{error.column + 1}: {error.code} {error.message}", file=sys.stderr)
    (distributed.write_json if args.format == "json" else distributed.write_table)(results, sys.stdout)
    confirmed = any(result.verdict.startswith("confirmed") for result in results)
    return EXIT_FINDINGS if confirmed or errors else EXIT_CLEAN


@subcommand("server", "run the Language Server over stdio, for editors (needs pygls: "
                      "pip install 'torchmemlint[server]')")
def language_server(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("pygls") is None:
        raise UsageError("the server needs pygls, which is not installed here (pip install 'torchmemlint[server]')")
    from torchmemlint.server import main as serve

    serve()
    return EXIT_CLEAN


@subcommand("rules", "list the rules")
def list_rules(args: argparse.Namespace) -> int:
    name_width = max(len(rule.name) for rule in ALL_RULES)
    print(f"{'code':<6}  {'name':<{name_width}}  default  message")
    for rule in ALL_RULES:
        default = "on" if rule.default_enabled else "off"
        print(f"{rule.code:<6}  {rule.name:<{name_width}}  {default:<7}  {rule.message}")
    return EXIT_CLEAN


@subcommand("explain", "print a rule's documentation",
            argument("code", help="a rule code, e.g. TML001 (or its name)"))
def explain(args: argparse.Namespace) -> int:
    wanted = args.code.strip()
    if wanted.upper() == FileError.code or wanted == FILE_ERROR_NAME:
        print(f"# {FileError.code} {FILE_ERROR_NAME}\n\n{FILE_ERROR_MESSAGE}\n\nalways on (ignore it by its full "
              f"code)\n\n{FILE_ERROR_DOCS.strip()}")
        return EXIT_CLEAN
    for rule in ALL_RULES:
        if wanted.upper() == rule.code or wanted == rule.name:
            default = "on by default" if rule.default_enabled else \
                f"off by default (enable with --extend-select {rule.code})"
            print(f"# {rule.code} {rule.name}\n\n{rule.message}\n\n{default}\n\n{rule_docs(rule)}")
            return EXIT_CLEAN
    raise UsageError(f"unknown rule {wanted!r} (`torchmemlint rules` lists the rules)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torchmemlint",
        description="Find PyTorch GPU-memory antipatterns in training and evaluation code.",
        epilog="Exit status: 0 nothing found, 1 findings, 2 usage, configuration or internal error, "
               "or a file that could not be checked (TML000).",
    )
    parser.add_argument("--version", action="version", version=f"torchmemlint {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in SUBCOMMANDS:
        command_parser = commands.add_parser(command.name, help=command.help,
                                             description=command.help)
        for arg in command.arguments:
            command_parser.add_argument(*arg.names, **arg.options)
        command_parser.set_defaults(run=command.run)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    script_arguments: list[str] = []
    if argv[:1] == ["verify"] and SCRIPT_ARGUMENTS_SEPARATOR in argv:
        at = argv.index(SCRIPT_ARGUMENTS_SEPARATOR)
        argv, script_arguments = argv[:at], argv[at + 1:]
    try:
        args = build_parser().parse_args(argv)
        args.script_args = script_arguments
    except SystemExit as exit_request:  # --help, --version, or argparse's usage error (2)
        return exit_request.code if isinstance(exit_request.code, int) else EXIT_ERROR
    try:
        return args.run(args)
    except UsageError as error:
        print(f"torchmemlint: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`torchmemlint check | head`): stop quietly, and keep Python
        # from complaining again while flushing stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    except Exception as error:  # the one place that turns a bug into one clear line
        if os.environ.get(DEBUG_VARIABLE) == "1":
            raise
        print(f"torchmemlint: internal error: {type(error).__name__}: {error} (please report "
              f"it; {DEBUG_VARIABLE}=1 shows the traceback)", file=sys.stderr)
        return EXIT_ERROR
