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
import os
import re
import sys
import types
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence


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
from torchmemlint.config import UsageError  # noqa: E402
from torchmemlint.diagnostics import DEBUG_VARIABLE  # noqa: E402
from torchmemlint.report import REPORTERS, reporter_for  # noqa: E402
from torchmemlint.report.base import Tally, rule_docs  # noqa: E402
from torchmemlint.report.fixes import FixTally, format_applied_fixes, format_fix_summary  # noqa: E402
from torchmemlint.report.text import format_statistics, format_summary  # noqa: E402
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
    collects rarely and leaves the objects already alive (the imports) out; then as before."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)
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


PATHS_ARGUMENT = argument("paths", nargs="*", default=["."], metavar="PATH",
                          help="files or folders to check (default: the current folder)")
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
    argument("--force-exclude", action="store_true",
             help="apply the exclusions to files named on the command line too (for pre-commit)"),
)


# Shared by check and fix: worker processes and the result cache.
SCALE_ARGUMENTS = (
    argument("-j", "--jobs", type=_positive_int, default=None, metavar="N",
             help="worker processes (default: one per CPU core; 1 works in this process)"),
    argument("--no-cache", action="store_true",
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
    """The keyword arguments of ``api.check_paths`` from ``SELECTION_ARGUMENTS``."""
    return {"select": args.select, "extend_select": args.extend_select, "ignore": args.ignore,
            "config": args.config, "force_exclude": args.force_exclude}


@subcommand(
    "check", "report memory antipatterns in Python files",
    PATHS_ARGUMENT,
    *SELECTION_ARGUMENTS,
    argument("--format", choices=tuple(REPORTERS), default="text",
             help="output format (default: text)"),
    argument("--exit-zero", action="store_true", help="exit with status 0 even when there are findings"),
    argument("--statistics", action="store_true", help="count the findings per rule code"),
    *SCALE_ARGUMENTS,
)
def check(args: argparse.Namespace) -> int:
    with _rare_garbage_collection():
        return _check(args)


def _check(args: argparse.Namespace) -> int:
    reporter = reporter_for(args.format, sys.stdout)
    tally = Tally()
    for result in api.check_paths(args.paths, jobs=args.jobs or _cpu_count(), cache=_cache(args),
                                  fix_edits=reporter.shows_fix_edits,
                                  **selection_options(args)):
        tally.add(result)
        reporter.add(result)
    reporter.finish()
    if not tally.files:
        return EXIT_CLEAN  # e.g. an empty pre-commit run: nothing to say
    # Text output keeps stdout to the finding lines (as flake8's) and the summary on stderr;
    # the other formats keep stdout one machine-readable document.
    if args.statistics and tally.total:
        print(format_statistics(tally), file=sys.stdout if args.format == "text" else sys.stderr)
    if args.format == "text":
        print(format_summary(tally), file=sys.stderr)
    if tally.unchecked:
        return EXIT_ERROR  # (--exit-zero too: a file that could not be checked is no clean result)
    return EXIT_FINDINGS if tally.total and not args.exit_zero else EXIT_CLEAN


@subcommand(
    "fix", "apply the fixes of the findings (the safe ones; all with --unsafe-fixes)",
    PATHS_ARGUMENT,
    *SELECTION_ARGUMENTS,
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
    from torchmemlint.fix import unified_diff  # the engine loads only when something is fixed

    # The remaining findings (or, with --diff, the patch) go to stdout; the summary to stderr.
    reporter = reporter_for("text", sys.stdout)
    tally = FixTally()
    for outcome in api.fix_paths(args.paths, unsafe=args.unsafe_fixes, write=not args.diff,
                                 jobs=args.jobs or _cpu_count(), cache=_cache(args), **selection_options(args)):
        tally.add(outcome)
        if not args.diff:
            reporter.add(outcome.remaining)
        elif outcome.changed:
            sys.stdout.write(unified_diff(outcome.path, outcome.original, outcome.fixed, outcome.encoding))
        else:
            reporter.add(FileResult(outcome.path, errors=outcome.remaining.errors))
    reporter.finish()
    if not tally.files:
        return EXIT_CLEAN
    if args.show_fixes:
        print(format_applied_fixes(tally, args.diff), file=sys.stderr if args.diff else sys.stdout)
    print(format_fix_summary(tally, args.diff, args.unsafe_fixes), file=sys.stderr)
    if tally.errors:
        return EXIT_ERROR
    if args.diff:
        return EXIT_FINDINGS if tally.changed_files else EXIT_CLEAN
    return EXIT_FINDINGS if tally.remaining else EXIT_CLEAN


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
             help="memory each replay may take beyond its footprint at the start (default: 4GiB)"),
    argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
             help="replay on CUDA when available (auto), or hide the GPUs (cpu) (default: auto)"),
    argument("--seed", type=int, default=0, help="seed of random, numpy and torch in every replay (default: 0)"),
    argument("--format", choices=("text", "json"), default="text", help="output format (default: text)"),
    argument("--plot", metavar="PNG", help="also draw live memory per iteration, original against fixed twin"),
    argument("--twin", metavar="FIXED.py",
             help="a fixed copy of the (one) script: the twin of the findings that have no fix of their own"),
)
def verify(args: argparse.Namespace) -> int:
    from torchmemlint.verify import Limits, ReplayError, Settings, verify_paths
    from torchmemlint.verify.output import ProgressLine, write_json, write_table

    limits = Limits(timeout_s=args.timeout, memory_limit=args.memory_limit, device=args.device, seed=args.seed)
    settings = Settings(args.iterations, args.warmup, tuple(args.script_args), limits)
    progress = ProgressLine(sys.stderr)
    try:
        results, errors = verify_paths(args.paths, settings, progress, twin=args.twin, **selection_options(args))
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
