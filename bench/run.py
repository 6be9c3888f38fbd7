#!/usr/bin/env python3
"""Speed benchmark of torchmemlint against parsing alone and against its peers (issue 6).

Every configuration lints (or parses) the same files, each run in a fresh process, and reports
the median over its runs of CPU seconds (user + sys of the process and every child it waited
for), wall seconds and peak RSS (of the largest single process). See bench/README.md.

    python bench/run.py --setup-peers          # once: the TorchFix and flake8 virtualenvs
    python bench/run.py [PATHS] [--repeat N] [--only CONFIG,...] [--json out.json]
"""
from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Optional

from filesets import BENCH_DIR, REPO_ROOT, collect, count_lines, default_roots

DEFAULT_SINGLE_FILE = BENCH_DIR / "samples" / "train_classifier.py"

# Linux allows about 2 MiB of arguments plus environment; longer file lists are split into
# several invocations of the same tool, whose costs are added up.
ARGV_BYTES_PER_INVOCATION = 512 * 1024

# Goals from issue 6, printed next to the ratios they judge.
GOAL_THROUGHPUT_VS_TORCHFIX = 20.0
GOAL_CPU_VS_LIBCST_PARSE = 1.0
GOAL_WARM_VS_COLD = 0.05
GOAL_SINGLE_FILE_SECONDS = 0.3

# The plugins that come with flake8 itself; "plain flake8" means no others are installed.
FLAKE8_OWN_PLUGINS = frozenset({"mccabe", "pycodestyle", "pyflakes"})


class Unavailable(Exception):
    """A configuration cannot run here (tool missing, flag not implemented yet); says why."""


class RunFailed(Exception):
    """A tool exited with a status that means it crashed, not that it found something."""


# ---------------------------------------------------------------------------------------------
# Peer virtualenvs


@dataclass(frozen=True)
class PeerVenv:
    """A peer installed alone in its own virtualenv, so that flake8 loads only its plugin."""

    name: str
    requirements: tuple[str, ...]
    # The flake8 plugin that must be registered (as `flake8 --version` lists it); None: none but
    # flake8's own.
    plugin: str | None

    def directory(self, venvs_home: Path) -> Path:
        return venvs_home / self.name

    def flake8(self, venvs_home: Path) -> Path:
        return self.directory(venvs_home) / "bin" / "flake8"


# Pinned so that numbers taken on different days compare; both use the same flake8 so that the
# difference between the two is TorchFix alone.
TORCHFIX_VENV = PeerVenv("torchfix", ("torchfix==0.7.0", "flake8==7.5.0"), plugin="TorchFix")
FLAKE8_VENV = PeerVenv("flake8", ("flake8==7.5.0",), plugin=None)
PEER_VENVS = (TORCHFIX_VENV, FLAKE8_VENV)
REQUIREMENTS_MARKER = "bench-requirements.txt"


def default_venvs_home() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "torchmemlint-bench" / "venvs"


def setup_peers(venvs_home: Path) -> int:
    """Create (or refresh) every peer's virtualenv with pip; idempotent."""
    status = 0
    for peer in PEER_VENVS:
        directory = peer.directory(venvs_home)
        marker = directory / REQUIREMENTS_MARKER
        wanted = "\n".join(peer.requirements) + "\n"
        if marker.is_file() and marker.read_text() == wanted and peer.flake8(venvs_home).exists():
            print(f"{peer.name}: up to date in {directory}")
        else:
            print(f"{peer.name}: installing {' '.join(peer.requirements)} into {directory}")
            shutil.rmtree(directory, ignore_errors=True)
            steps = (
                [sys.executable, "-m", "venv", str(directory)],
                [str(directory / "bin" / "python"), "-m", "pip", "install", "--quiet",
                 *peer.requirements],
            )
            for step in steps:
                completed = subprocess.run(step, capture_output=True, text=True)
                if completed.returncode != 0:
                    print(f"{peer.name}: `{shlex.join(step)}` failed:\n{completed.stderr.strip()}",
                          file=sys.stderr)
                    status = 1
                    break
            else:
                marker.write_text(wanted)
        try:
            print(f"{peer.name}: flake8 {checked_flake8_version(peer, venvs_home)}")
        except Unavailable as reason:
            print(f"{peer.name}: {reason}", file=sys.stderr)
            status = 1
    return status


def checked_flake8_version(peer: PeerVenv, venvs_home: Path) -> str:
    """`flake8 --version` of a peer's venv, once exactly the expected plugins are seen to load."""
    flake8 = peer.flake8(venvs_home)
    if not flake8.exists():
        raise Unavailable(f"not installed in {peer.directory(venvs_home)}: "
                          f"run `python bench/run.py --setup-peers`")
    completed = subprocess.run([str(flake8), "--version"], capture_output=True, text=True,
                               env=environment_without_python_path())
    version = " ".join(completed.stdout.split())
    listed = re.search(r"\((.*?)\)", version)
    if completed.returncode != 0 or listed is None:
        raise Unavailable(f"`{flake8} --version` failed: {completed.stderr.strip()}")
    plugins = {entry.split(":")[0].strip() for entry in listed.group(1).split(",")}
    expected = FLAKE8_OWN_PLUGINS | ({peer.plugin} if peer.plugin else set())
    if plugins != expected:
        raise Unavailable(f"flake8 in {peer.directory(venvs_home)} loads plugins "
                          f"{sorted(plugins)}, expected {sorted(expected)}")
    return version


# ---------------------------------------------------------------------------------------------
# What each configuration runs


@dataclass
class Command:
    """How to invoke one configuration; the file names are appended to ``argv``."""

    argv: list[str]
    env: dict[str, str]
    ok_exit_codes: frozenset[int] = frozenset({0})
    # A warm-cache configuration runs once unmeasured first, to fill the cache.
    prime: bool = False
    # For linters the number of stdout lines is the number of findings: a sanity check that the
    # tool really looked at the files.
    reports_findings: bool = False
    notes: list[str] = field(default_factory=list)


def environment_without_python_path() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("PYTHONHOME", None)
    return env


class Tools:
    """Finds the tools under test once per benchmark run."""

    def __init__(self, venvs_home: Path, scratch: Path, cpus: int):
        self.venvs_home = venvs_home
        self.scratch = scratch
        self.cpus = cpus
        self._torchmemlint_help: str | Unavailable | None = None

    def torchmemlint_env(self) -> dict[str, str]:
        # The working tree under test, not whatever torchmemlint may be installed.
        env = environment_without_python_path()
        env["PYTHONPATH"] = str(REPO_ROOT)
        return env

    def torchmemlint_help(self) -> str:
        if self._torchmemlint_help is None:
            probe = [sys.executable, "-m", "torchmemlint", "check", "--help"]
            completed = subprocess.run(probe, capture_output=True, text=True,
                                       env=self.torchmemlint_env(), cwd=self.scratch)
            if completed.returncode == 0:
                self._torchmemlint_help = completed.stdout
            else:
                last_line = (completed.stderr.strip().splitlines() or ["no output"])[-1]
                self._torchmemlint_help = Unavailable(
                    f"`python -m torchmemlint check --help` failed in {REPO_ROOT}: {last_line}")
        if isinstance(self._torchmemlint_help, Unavailable):
            raise self._torchmemlint_help
        return self._torchmemlint_help

    def torchmemlint_flag(self, *spellings: str) -> str | None:
        """The first spelling of an option that `torchmemlint check --help` lists, else None."""
        help_text = self.torchmemlint_help()
        for spelling in spellings:
            if re.search(rf"(?<![\w-]){re.escape(spelling)}(?![\w-])", help_text):
                return spelling
        return None

    def torchmemlint(self, jobs: int | None, warm_cache: bool,
                     jobs_flag_required: bool = False) -> Command:
        """`torchmemlint check` with ``jobs`` processes (None: the CLI's default)."""
        command = Command([sys.executable, "-m", "torchmemlint", "check"],
                          self.torchmemlint_env(), frozenset({0, 1}), reports_findings=True)
        jobs_flag = self.torchmemlint_flag("-j", "--jobs")
        if jobs is not None:
            if jobs_flag is not None:
                command.argv += [jobs_flag, str(jobs)]
            elif jobs_flag_required:
                raise Unavailable("`torchmemlint check` has no -j/--jobs flag yet")
            else:
                command.notes.append("no -j/--jobs flag yet: ran with the CLI's default")
        no_cache_flag = self.torchmemlint_flag("--no-cache")
        if warm_cache:
            if no_cache_flag is None:
                raise Unavailable("`torchmemlint check` has no cache yet (no --no-cache flag)")
            cache_dir_flag = self.torchmemlint_flag("--cache-dir")
            if cache_dir_flag is not None:
                command.argv += [cache_dir_flag, str(self.scratch / "cache")]
            else:
                command.notes.append("cache in the tool's default place (cwd: a scratch folder)")
            command.prime = True
        elif no_cache_flag is not None:
            command.argv.append(no_cache_flag)
        else:
            command.notes.append("no --no-cache flag yet: no cache, every run is cold")
        return command

    def python_script(self, script: str, module: str) -> Command:
        if importlib.util.find_spec(module) is None:
            raise Unavailable(f"{module} is not installed for {sys.executable}")
        return Command([sys.executable, str(BENCH_DIR / script)], environment_without_python_path())

    def flake8(self, peer: PeerVenv, options: list[str]) -> Command:
        version = checked_flake8_version(peer, self.venvs_home)
        # --isolated: no configuration file anywhere changes what is measured.
        return Command([str(peer.flake8(self.venvs_home)), "--isolated", *options],
                       environment_without_python_path(), frozenset({0, 1}),
                       reports_findings=True,
                       notes=[f"flake8 {version}", "flake8's default --jobs=auto (all cores)"])


@dataclass(frozen=True)
class Config:
    name: str
    title: str
    # True: the one typical training file (latency); False: the whole file set (throughput).
    single_file: bool
    default_repeat: int
    command: Callable[[Tools], Command]


CONFIGS = (
    Config("tml-j1", "torchmemlint check -j 1, no cache", False, 5,
           lambda tools: tools.torchmemlint(jobs=1, warm_cache=False)),
    Config("tml-jall", "torchmemlint check -j <all cores>, no cache", False, 5,
           lambda tools: tools.torchmemlint(jobs=tools.cpus, warm_cache=False,
                                            jobs_flag_required=True)),
    Config("tml-warm", "torchmemlint check -j <all cores>, warm cache", False, 5,
           lambda tools: tools.torchmemlint(jobs=tools.cpus, warm_cache=True)),
    Config("libcst", "LibCST parse_module of every file", False, 5,
           lambda tools: tools.python_script("parse_only.py", "libcst")),
    Config("ast", "ast.parse + ast.walk of every file", False, 5,
           lambda tools: tools.python_script("ast_only.py", "ast")),
    # The peers take minutes per run: one run unless --repeat asks for more.
    Config("torchfix", "TorchFix through flake8 --select=TOR", False, 1,
           lambda tools: tools.flake8(TORCHFIX_VENV, ["--select=TOR"])),
    Config("flake8", "plain flake8 (no plugins)", False, 1,
           lambda tools: tools.flake8(FLAKE8_VENV, [])),
    Config("tml-1file", "torchmemlint check, one file, no cache", True, 5,
           lambda tools: tools.torchmemlint(jobs=None, warm_cache=False)),
    Config("torchfix-1file", "TorchFix through flake8, one file", True, 5,
           lambda tools: tools.flake8(TORCHFIX_VENV, ["--select=TOR"])),
    Config("flake8-1file", "plain flake8, one file", True, 5,
           lambda tools: tools.flake8(FLAKE8_VENV, [])),
)
CONFIGS_BY_NAME = {config.name: config for config in CONFIGS}


# ---------------------------------------------------------------------------------------------
# Measuring


@dataclass(frozen=True)
class Sample:
    cpu_s: float
    wall_s: float
    peak_rss_mib: float
    stdout_lines: int


@dataclass
class Result:
    name: str
    title: str
    single_file: bool
    status: str  # "ok", "skipped" or "failed"
    reason: str = ""
    command: str = ""
    notes: list[str] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    lines: int = 0
    reports_findings: bool = False

    def median(self, metric: str) -> float:
        return statistics.median(getattr(sample, metric) for sample in self.samples)

    def lines_per_cpu_second(self) -> float:
        return self.lines / self.median("cpu_s")

    def to_json(self) -> dict:
        data = asdict(self)
        if self.status == "ok":
            data["median"] = {metric: self.median(metric)
                              for metric in ("cpu_s", "wall_s", "peak_rss_mib", "stdout_lines")}
            data["lines_per_cpu_s"] = self.lines_per_cpu_second()
        return data


def argv_chunks(files: list[Path]) -> list[list[str]]:
    chunks: list[list[str]] = [[]]
    size = 0
    for file in map(str, files):
        if chunks[-1] and size + len(file) + 1 > ARGV_BYTES_PER_INVOCATION:
            chunks.append([])
            size = 0
        chunks[-1].append(file)
        size += len(file) + 1
    return chunks


def run_once(command: Command, files: list[Path], scratch: Path) -> Sample:
    """One fresh process per argv chunk; CPU and wall add up, peak RSS is the largest."""
    cpu_s = wall_s = 0.0
    peak_rss_kib = 0
    stdout_lines = 0
    stdout_path, stderr_path = scratch / "stdout", scratch / "stderr"
    for chunk in argv_chunks(files):
        with open(stdout_path, "wb") as stdout, open(stderr_path, "wb") as stderr:
            started = time.perf_counter()
            process = subprocess.Popen(command.argv + chunk, stdin=subprocess.DEVNULL,
                                       stdout=stdout, stderr=stderr,
                                       cwd=scratch / "cwd", env=command.env)
            # wait4 gives the usage of this child and of all its own waited-for children
            # (flake8's and torchmemlint's worker processes), and nothing else's.
            _, wait_status, usage = os.wait4(process.pid, 0)
            wall_s += time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(wait_status)
        stderr_text = stderr_path.read_text(errors="replace")
        # An uncaught exception also exits with status 1, the linters' "found something".
        crashed = "Traceback (most recent call last)" in stderr_text
        if process.returncode not in command.ok_exit_codes or crashed:
            how = (f"killed by signal {-process.returncode}" if process.returncode < 0
                   else f"exit status {process.returncode}")
            stderr_tail = stderr_text.strip().splitlines()[-5:]
            raise RunFailed(f"{how}; stderr ends with:\n      " + "\n      ".join(stderr_tail))
        cpu_s += usage.ru_utime + usage.ru_stime
        peak_rss_kib = max(peak_rss_kib, usage.ru_maxrss)  # Linux: KiB
        stdout_lines += count_lines(stdout_path.read_bytes())
    return Sample(cpu_s, wall_s, peak_rss_kib / 1024, stdout_lines)


@dataclass
class Measurement:
    """One configuration being measured: its command, its files, the runs it still needs."""

    config: Config
    result: Result
    files: list[Path]
    runs_left: int
    command: Optional[Command] = None


def prepare(config: Config, tools: Tools, files: list[Path], lines: int, repeat: int) -> Measurement:
    """The configuration's command, ready to run (or its result says why it is skipped), and its
    cache filled where it measures a warm cache (not measured)."""
    result = Result(config.name, config.title, config.single_file, "ok", lines=lines)
    measurement = Measurement(config, result, files, repeat)
    try:
        command = config.command(tools)
    except Unavailable as reason:
        result.status, result.reason = "skipped", str(reason)
        return measurement
    result.command = shlex.join(command.argv + [f"<{len(files)} files>"])
    result.notes = command.notes
    result.reports_findings = command.reports_findings
    measurement.command = command
    try:
        if command.prime:
            progress(f"{config.name}: filling the cache (not measured)")
            run_once(command, files, tools.scratch)
    except RunFailed as failure:
        result.status, result.reason = "failed", str(failure)
    return measurement


def run_round(measurements: list[Measurement], tools: Tools) -> None:
    """One run of every configuration that still needs one, in turn: a machine that slows down
    or speeds up during the benchmark then does so for every configuration alike, instead of
    for whichever one happened to run at that time."""
    for measurement in measurements:
        result, command = measurement.result, measurement.command
        if result.status != "ok" or measurement.runs_left <= 0:
            continue
        measurement.runs_left -= 1
        try:
            sample = run_once(command, measurement.files, tools.scratch)
        except RunFailed as failure:
            result.status, result.reason = "failed", str(failure)
            continue
        result.samples.append(sample)
        progress(f"{result.name}: run {len(result.samples)}/{len(result.samples) + measurement.runs_left}: "
                 f"{sample.cpu_s:.2f} s CPU, {sample.wall_s:.2f} s wall, {sample.peak_rss_mib:.0f} MiB")
        if measurement.runs_left == 0 and not command.reports_findings:
            result.notes.append(read_last_line(tools.scratch / "stdout"))


def read_last_line(path: Path) -> str:
    lines = path.read_text(errors="replace").strip().splitlines()
    return lines[-1] if lines else ""


def progress(message: str) -> None:
    print(f"  .. {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Reporting


ROW_FORMAT = "{:<15} {:>4} {:>9} {:>9} {:>9} {:>12} {:>9}"


def print_header_row() -> None:
    print(ROW_FORMAT.format("config", "runs", "CPU s", "wall s", "RSS MiB", "lines/CPU-s",
                            "findings"))


def print_row(result: Result) -> None:
    if result.status != "ok":
        print(f"{result.name:<15} {result.status.upper()}: {result.reason}")
        return
    findings = str(int(result.median("stdout_lines"))) if result.reports_findings else "-"
    print(ROW_FORMAT.format(result.name, len(result.samples), f"{result.median('cpu_s'):.2f}",
                            f"{result.median('wall_s'):.2f}",
                            f"{result.median('peak_rss_mib'):.0f}",
                            f"{result.lines_per_cpu_second():,.0f}", findings))
    print(f"{'':<15} {result.command}")
    for note in result.notes:
        print(f"{'':<15} ({note})")


@dataclass(frozen=True)
class Ratio:
    label: str
    numerator: str
    # The first of these that ran is the reference.
    denominators: tuple[str, ...]
    metric: str  # "cpu_s" or "wall_s"
    goal: str
    inverted: bool = False  # True: report denominator/numerator (a throughput ratio)


RATIOS = (
    Ratio("throughput torchmemlint -j 1 / TorchFix", "tml-j1", ("torchfix",), "cpu_s",
          f">= {GOAL_THROUGHPUT_VS_TORCHFIX:g}x", inverted=True),
    Ratio("CPU torchmemlint -j 1 cold / LibCST parse only", "tml-j1", ("libcst",), "cpu_s",
          f"<= {GOAL_CPU_VS_LIBCST_PARSE:g}"),
    Ratio("CPU warm cache / cold", "tml-warm", ("tml-jall", "tml-j1"), "cpu_s",
          f"<= {GOAL_WARM_VS_COLD:g}"),
    Ratio("wall warm cache / cold", "tml-warm", ("tml-jall", "tml-j1"), "wall_s",
          f"<= {GOAL_WARM_VS_COLD:g}"),
    Ratio("CPU LibCST parse / ast parse+walk (context)", "libcst", ("ast",), "cpu_s", ""),
    Ratio("CPU TorchFix / plain flake8 (context)", "torchfix", ("flake8",), "cpu_s", ""),
)
LATENCIES = (("torchmemlint", "tml-1file", f"< {GOAL_SINGLE_FILE_SECONDS:g} s"),
             ("TorchFix", "torchfix-1file", ""), ("plain flake8", "flake8-1file", ""))


def describe_absence(results: dict[str, Result], name: str) -> str:
    return f"{name} {results[name].status if name in results else 'not selected'}"


def compute_ratios(results: dict[str, Result]) -> dict[str, dict]:
    def ran(name: str) -> bool:
        return name in results and results[name].status == "ok"

    ratios = {}
    for ratio in RATIOS:
        entry: dict = {"goal": ratio.goal, "value": None}
        reference = next((name for name in ratio.denominators if ran(name)), None)
        if not ran(ratio.numerator) or reference is None:
            missing = [name for name in (ratio.numerator, *ratio.denominators) if not ran(name)]
            entry["pending"] = ", ".join(describe_absence(results, name) for name in missing)
        else:
            top = results[ratio.numerator].median(ratio.metric)
            bottom = results[reference].median(ratio.metric)
            entry["value"] = bottom / top if ratio.inverted else top / bottom
            entry["of"] = f"{ratio.numerator} / {reference}"
        ratios[ratio.label] = entry
    for tool, name, goal in LATENCIES:
        entry = {"goal": goal, "value": None}
        if ran(name):
            entry["value"] = results[name].median("wall_s")
        else:
            entry["pending"] = describe_absence(results, name)
        ratios[f"single-file latency, wall s: {tool}"] = entry
    return ratios


def print_ratios(ratios: dict[str, dict]) -> None:
    print("\nRatios (of medians)")
    for label, entry in ratios.items():
        value = "n/a" if entry["value"] is None else f"{entry['value']:.3g}"
        goal = f"   goal {entry['goal']}" if entry["goal"] else ""
        of = f"   ({entry['of']})" if "of" in entry else ""
        pending = f"   (pending: {entry['pending']})" if "pending" in entry else ""
        print(f"  {label:<48} {value:>8}{goal}{of}{pending}")


def git_revision() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(REPO_ROOT), *args], capture_output=True,
                              text=True).stdout.strip()
    revision = git("rev-parse", "--short", "HEAD") or "unknown"
    return revision + ("+dirty" if git("status", "--porcelain") else "")


def installed_version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def machine_description(cpus: int) -> dict:
    cpu_model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        models = re.findall(r"^model name\s*:\s*(.+)$", cpuinfo.read_text(), re.MULTILINE)
        cpu_model = models[0] if models else ""
    return {
        "platform": platform.platform(),
        "cpu": cpu_model,
        "usable_cpus": cpus,
        "load_average_at_start": os.getloadavg(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "torch": installed_version("torch"),
        "libcst": installed_version("libcst"),
        "torchmemlint_revision": git_revision(),
    }


# ---------------------------------------------------------------------------------------------
# Command line


def parse_repeats(values: list[str]) -> tuple[int | None, dict[str, int]]:
    """`--repeat N` for every configuration, `--repeat NAME=N` for one; later ones win."""
    everywhere, per_config = None, {}
    for value in values:
        name, _, count = value.rpartition("=")
        if not count.isdigit() or int(count) < 1:
            raise SystemExit(f"--repeat {value}: expected N or CONFIG=N with N >= 1")
        if not name:
            everywhere, per_config = int(count), {}
        elif name not in CONFIGS_BY_NAME:
            raise SystemExit(f"--repeat {value}: unknown configuration {name!r}; "
                             f"known: {', '.join(CONFIGS_BY_NAME)}")
        else:
            per_config[name] = int(count)
    return everywhere, per_config


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Measure torchmemlint against LibCST/ast parsing, TorchFix and flake8.",
        epilog="configurations: " + "; ".join(f"{c.name}: {c.title}" for c in CONFIGS))
    parser.add_argument("paths", nargs="*", type=Path,
                        help="files or folders (default: torch/{nn,optim,utils,ao} of the "
                             "installed torch, plus fixtures/)")
    parser.add_argument("--repeat", action="append", default=[], metavar="N|CONFIG=N",
                        help="runs per configuration (median reported); default 5, peers 1")
    parser.add_argument("--only", metavar="CONFIG,...",
                        help="run only these configurations")
    parser.add_argument("--single", type=Path, default=DEFAULT_SINGLE_FILE,
                        help="the file of the single-file latency runs (default: %(default)s)")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write the results here")
    parser.add_argument("--venvs", type=Path, default=default_venvs_home(),
                        help="where the peers' virtualenvs live (default: %(default)s)")
    parser.add_argument("--setup-peers", action="store_true",
                        help="create the peers' virtualenvs with pip, then exit")
    return parser.parse_args(argv)


def selected_configs(only: str | None) -> list[Config]:
    if only is None:
        return list(CONFIGS)
    names = [name.strip() for name in only.split(",") if name.strip()]
    unknown = [name for name in names if name not in CONFIGS_BY_NAME]
    if unknown or not names:
        raise SystemExit(f"--only: unknown configuration(s) {', '.join(unknown) or '(none)'}; "
                         f"known: {', '.join(CONFIGS_BY_NAME)}")
    return [CONFIGS_BY_NAME[name] for name in names]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.setup_peers:
        return setup_peers(args.venvs)
    configs = selected_configs(args.only)
    repeat_everywhere, repeat_per_config = parse_repeats(args.repeat)

    missing = [str(path) for path in [*args.paths, args.single] if not path.exists()]
    if missing:
        raise SystemExit(f"no such file or folder: {', '.join(missing)}")
    files = collect(args.paths or default_roots())
    if not files:
        raise SystemExit("no Python files found")
    lines = sum(count_lines(file.read_bytes()) for file in files)  # also warms the page cache
    single = [args.single.resolve()]
    single_lines = count_lines(single[0].read_bytes())

    cpus = len(os.sched_getaffinity(0))
    machine = machine_description(cpus)
    print(f"torchmemlint benchmark: {machine['python']}, torch {machine['torch']}, "
          f"libcst {machine['libcst']}, {cpus} CPUs ({machine['cpu'] or 'unknown CPU'}), "
          f"torchmemlint {machine['torchmemlint_revision']}")
    print(f"files: {len(files)}, lines: {lines:,}; single file: {single[0]} "
          f"({single_lines} lines)")
    print("medians over the runs; CPU = user+sys of the process and its children; "
          "RSS = largest single process; load average at start: "
          f"{machine['load_average_at_start'][0]:.2f}\n")

    results: dict[str, Result] = {}
    with tempfile.TemporaryDirectory(prefix="torchmemlint-bench-") as scratch_name:
        scratch = Path(scratch_name)
        (scratch / "cwd").mkdir()
        tools = Tools(args.venvs, scratch, cpus)
        measurements = []
        for config in configs:
            repeat = repeat_per_config.get(config.name, repeat_everywhere or config.default_repeat)
            if config.single_file:
                measurements.append(prepare(config, tools, single, single_lines, repeat))
            else:
                measurements.append(prepare(config, tools, files, lines, repeat))
        while any(m.result.status == "ok" and m.runs_left > 0 for m in measurements):
            run_round(measurements, tools)
        print_header_row()
        for measurement in measurements:
            results[measurement.config.name] = measurement.result
            print_row(measurement.result)

    ratios = compute_ratios(results)
    print_ratios(ratios)
    # Other processes on the machine inflate wall time (and, less, CPU time): say how busy it was.
    machine["load_average_at_end"] = os.getloadavg()
    print(f"\nload average at end: {machine['load_average_at_end'][0]:.2f}")
    if args.json:
        report = {
            "machine": machine,
            "files": {"count": len(files), "lines": lines,
                      "single_file": str(single[0]), "single_file_lines": single_lines},
            "configs": {name: result.to_json() for name, result in results.items()},
            "ratios": ratios,
        }
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    failed = [result.name for result in results.values() if result.status == "failed"]
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
