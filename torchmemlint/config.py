"""Settings: ``[tool.torchmemlint]`` in ``pyproject.toml``, overridden by the command line, and
which rules they select.

Each checked file uses the nearest ``pyproject.toml`` above it that has a ``[tool.torchmemlint]``
section (or the one given with ``--config``); command-line options are applied on top.

Rule selection works like ruff's: ``select`` replaces the set of enabled rules, ``extend-select``
adds to it, ``ignore`` removes from it. Selectors are code prefixes (``TML``, ``TML00``,
``TML001``); when a rule matches both a select and an ignore selector, the longer one wins and
ignore wins a tie. Rules that are off by default are enabled only by their full code in
``select``/``extend-select``: ``TML`` or ``TML0`` never turns them on. ``ALL`` (ruff's spelling)
matches every rule, the off-by-default ones included, and is the least specific selector.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

from torchmemlint.diagnostics import FileError
from torchmemlint.diagnostics import warn
from torchmemlint.files import DEFAULT_EXCLUDE, DEFAULT_MAX_FILE_SIZE
from torchmemlint.patterns import PathPattern, relative_posix
from torchmemlint.rules.base import Rule

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

CONFIG_FILE_NAME = "pyproject.toml"
CONFIG_SECTION = "torchmemlint"  # [tool.torchmemlint]
_DEFAULT_EXCLUDE_PATTERNS = tuple(PathPattern.compile(text) for text in DEFAULT_EXCLUDE)


class UsageError(Exception):
    """A bad configuration file or command line: reported in one line, exit status 2."""


@dataclass(frozen=True)
class RuleSelection:
    """One layer of rule selection (the configuration file's, then the command line's)."""

    select: Optional[tuple[str, ...]] = None  # None: keep what the previous layer enabled
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()


def select_rules(rules: Sequence[Rule], layers: Sequence[RuleSelection]) -> tuple[Rule, ...]:
    """The rules enabled after applying ``layers`` in order to the default selection."""
    enabled = {rule.code for rule in rules if rule.default_enabled}
    for layer in layers:
        previous = enabled if layer.select is None else set()
        enabling = (*(layer.select or ()), *layer.extend_select)
        enabled = set()
        for rule in rules:
            on = _specificity(rule.code, enabling, exact_only=not rule.default_enabled)
            off = _specificity(rule.code, layer.ignore)
            if on is None and off is None:
                keep = rule.code in previous
            else:
                keep = on is not None and (off is None or on > off)
            if keep:
                enabled.add(rule.code)
    return tuple(rule for rule in rules if rule.code in enabled)


ALL = "ALL"


def _specificity(code: str, selectors: Sequence[str], exact_only: bool = False) -> Optional[int]:
    """Length of the longest selector matching ``code`` (0 for ``ALL``), None when none does."""
    lengths = [0 if selector == ALL else len(selector) for selector in selectors
               if selector == ALL or (selector == code if exact_only else code.startswith(selector))]
    return max(lengths, default=None)


def check_selectors(selectors: Sequence[str], rules: Sequence[Rule], where: str) -> tuple[str, ...]:
    """Normalise rule selectors (strip, upper-case) and reject those that select no rule (the
    file-error code ``TML000`` is known too)."""
    normalized = tuple(selector.strip().upper() for selector in selectors if selector.strip())
    for selector in normalized:
        if selector != ALL and selector != FileError.code and not any(rule.code.startswith(selector) for rule in rules):
            raise UsageError(f"unknown rule code or prefix {selector!r} in {where} "
                             "(`torchmemlint rules` lists the rules)")
    return normalized


@dataclass(frozen=True)
class ConfigFile:
    """The ``[tool.torchmemlint]`` section of one ``pyproject.toml``, validated."""

    path: Optional[Path]
    selection: RuleSelection = RuleSelection()
    exclude: tuple[PathPattern, ...] = _DEFAULT_EXCLUDE_PATTERNS
    per_file_ignores: tuple[tuple[PathPattern, tuple[str, ...]], ...] = ()
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    error: str = ""  # why this configuration is unusable: the files it governs are not checked


class ConfigError(UsageError):
    """A ``pyproject.toml`` that cannot be read or parsed. ``ours``: it may hold a
    ``[tool.torchmemlint]`` section (it names torchmemlint), so its files cannot be checked as
    configured; otherwise it is some other tool's file, ignored with a warning."""

    def __init__(self, message: str, ours: bool) -> None:
        super().__init__(message)
        self.ours = ours


def read_pyproject(path: Path) -> Optional[dict[str, Any]]:
    """The ``[tool.torchmemlint]`` table of a ``pyproject.toml``, None when it has none."""
    try:
        with open(path, "rb") as file:
            raw = file.read()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read configuration: {error.strerror or error}", ours=True) from None
    try:
        document = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 (TOML must be): {error.reason} at byte {error.start}",
                          ours=CONFIG_SECTION.encode() in raw) from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}", ours=CONFIG_SECTION.encode() in raw) from None
    except RecursionError:  # (tomllib's parser recurses once per nested array or inline table)
        raise ConfigError(f"{path}: invalid TOML: nested too deeply", ours=CONFIG_SECTION.encode() in raw) from None
    section = document.get("tool", {}).get(CONFIG_SECTION)
    if section is not None and not isinstance(section, dict):
        raise UsageError(f"{path}: [tool.{CONFIG_SECTION}] must be a table")
    return section


def parse_config(table: dict[str, Any], path: Optional[Path], rules: Sequence[Rule]) -> ConfigFile:
    """Validate a ``[tool.torchmemlint]`` table. Unknown keys and wrong types are errors, so
    that a typo does not silently do nothing."""
    reader = _TableReader(table, path)
    reader.reject_unknown_keys()
    selection = RuleSelection(
        select=reader.codes("select", rules) if "select" in table else None,
        extend_select=reader.codes("extend-select", rules),
        ignore=reader.codes("ignore", rules),
    )
    exclude = (reader.patterns("exclude") if "exclude" in table else _DEFAULT_EXCLUDE_PATTERNS)
    per_file_ignores = tuple(
        (reader.pattern(glob, "per-file-ignores"),
         check_selectors(reader.string_list(codes, f"per-file-ignores {glob!r}"), rules,
                         reader.where(f"per-file-ignores {glob!r}")))
        for glob, codes in reader.table("per-file-ignores").items()
    )
    return ConfigFile(
        path=path,
        selection=selection,
        exclude=exclude + reader.patterns("extend-exclude"),
        per_file_ignores=per_file_ignores,
        max_file_size=reader.positive_int("max-file-size", DEFAULT_MAX_FILE_SIZE),
    )


class _TableReader:
    """Reads typed values out of a ``[tool.torchmemlint]`` table; errors name the file and key."""

    KNOWN_KEYS = ("select", "extend-select", "ignore", "exclude", "extend-exclude",
                  "per-file-ignores", "max-file-size")

    def __init__(self, table: dict[str, Any], path: Optional[Path]) -> None:
        self._table = table
        self._path = path

    def where(self, key: str) -> str:
        return f"{self._path}: [tool.{CONFIG_SECTION}] {key}" if self._path else key

    def reject_unknown_keys(self) -> None:
        unknown = sorted(set(self._table) - set(self.KNOWN_KEYS))
        if unknown:
            raise UsageError(f"{self.where(unknown[0])}: unknown option (known options: "
                             f"{', '.join(self.KNOWN_KEYS)})")

    def string_list(self, value: Any, key: str) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise UsageError(f"{self.where(key)}: expected a list of strings, got {value!r}")
        return value

    def codes(self, key: str, rules: Sequence[Rule]) -> tuple[str, ...]:
        return check_selectors(self.string_list(self._table.get(key, []), key), rules, self.where(key))

    def pattern(self, text: str, key: str) -> PathPattern:
        try:
            return PathPattern.compile(text)
        except ValueError as error:
            raise UsageError(f"{self.where(key)}: {error}") from None

    def patterns(self, key: str) -> tuple[PathPattern, ...]:
        return tuple(self.pattern(text, key) for text in self.string_list(self._table.get(key, []), key))

    def table(self, key: str) -> dict[str, Any]:
        value = self._table.get(key, {})
        if not isinstance(value, dict):
            raise UsageError(f"{self.where(key)}: expected a table of glob = [codes], got {value!r}")
        return value

    def positive_int(self, key: str, default: int) -> int:
        value = self._table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise UsageError(f"{self.where(key)}: expected a positive number of bytes, got {value!r}")
        return value


@dataclass(frozen=True)
class RootedPattern:
    """A path pattern and the folder its anchored form is relative to."""

    pattern: PathPattern
    root: Path

    def matches(self, path: Path, is_dir: bool) -> bool:
        return self.pattern.matches_path(path, self.root, is_dir)


@dataclass(frozen=True)
class PathOptions:
    """The command line's file options (``--exclude``, ``--extend-exclude``,
    ``--per-file-ignores``, ``--extend-per-file-ignores``, ``--no-respect-gitignore``,
    ``--isolated``), patterns relative to the working directory as ruff's are. ``exclude`` and
    ``per_file_ignores`` replace the configured ones when given; the ``extend_`` ones add."""

    exclude: Optional[tuple[str, ...]] = None
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: Optional[tuple[tuple[str, tuple[str, ...]], ...]] = None
    extend_per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    respect_gitignore: bool = True  # what .gitignore and .git/info/exclude ignore is skipped
    isolated: bool = False  # no configuration file is read


@dataclass(frozen=True)
class Settings:
    """Everything that decides how the files of one folder are checked."""

    root: Path  # the configuration's folder, else the cwd
    config_path: Optional[Path]
    rules: tuple[Rule, ...]
    exclude: tuple[RootedPattern, ...]
    per_file_ignores: tuple[tuple[RootedPattern, tuple[str, ...]], ...]
    max_file_size: int
    file_errors_ignored: bool = False  # ``TML000`` named in ``ignore``

    def reports_file_errors(self, path: str) -> bool:
        """Whether ``TML000`` is reported for ``path``: unless ignored by its full code, in
        ``ignore`` or in a ``per-file-ignores`` entry matching ``path``."""
        if self.file_errors_ignored:
            return False
        absolute = Path(os.path.abspath(path))
        return not any(FileError.code in codes and pattern.matches(absolute, is_dir=False)
                       for pattern, codes in self.per_file_ignores)

    def excludes(self, path: Path, is_dir: bool) -> bool:
        """Whether an ``exclude`` pattern matches ``path`` itself (absolute). Discovery asks
        this of every entry: the path is made relative once per root, not once per pattern."""
        relative_by_root: dict[int, Optional[str]] = {}
        for rooted in self.exclude:
            key = id(rooted.root)
            if key not in relative_by_root:
                relative_by_root[key] = relative_posix(path, rooted.root)
            if rooted.pattern.matches_relative(relative_by_root[key], path.name, is_dir):
                return True
        return False
    error: str = ""  # the configuration is broken: its files are not checked, each says why

    def rules_for(self, path: str) -> tuple[Rule, ...]:
        """The selected rules minus those the ``per-file-ignores`` turn off for ``path``."""
        absolute = Path(os.path.abspath(path))
        ignored = tuple(code for pattern, codes in self.per_file_ignores
                        if pattern.matches(absolute, is_dir=False) for code in codes)
        if not ignored:
            return self.rules
        return tuple(rule for rule in self.rules if not rule.code.startswith(ignored))


class SettingsResolver:
    """Finds the settings of each folder: the nearest configuration (cached per folder) with the
    command line's options on top."""

    def __init__(self, rules: Sequence[Rule], command_line: RuleSelection = RuleSelection(),
                 config_path: Optional[str] = None, path_options: PathOptions = PathOptions()) -> None:
        self._rules = tuple(rules)
        self._command_line = RuleSelection(
            select=(None if command_line.select is None
                    else check_selectors(command_line.select, rules, "--select")),
            extend_select=check_selectors(command_line.extend_select, rules, "--extend-select"),
            ignore=check_selectors(command_line.ignore, rules, "--ignore"),
        )
        self._cwd = Path.cwd()
        self._path_options = _rooted_path_options(path_options, rules, self._cwd)
        self._isolated = path_options.isolated
        self._fixed_config: Optional[ConfigFile] = None
        if config_path is not None:
            path = Path(os.path.abspath(config_path))
            if not os.path.isfile(path):
                raise UsageError(f"--config {config_path}: no such file")
            self._fixed_config = parse_config(read_pyproject(path) or {}, path, rules)
        self._config_by_folder: dict[Path, Optional[ConfigFile]] = {}
        self._settings_by_config: dict[Optional[Path], Settings] = {}
        self._settings_by_file_folder: dict[str, Settings] = {}

    def settings_for(self, folder: Path) -> Settings:
        """``folder`` is absolute."""
        config = self._fixed_config or (None if self._isolated else self._nearest_config(folder))
        key = config.path if config else None
        settings = self._settings_by_config.get(key)
        if settings is None:
            settings = self._settings_by_config[key] = self._settings(config or ConfigFile(path=None))
        return settings

    def settings_for_file(self, path: str) -> Settings:
        folder = os.path.dirname(os.path.abspath(path))
        settings = self._settings_by_file_folder.get(folder)
        if settings is None:  # (a folder's files share it: no Path per file)
            settings = self._settings_by_file_folder[folder] = self.settings_for(Path(folder))
        return settings

    def _settings(self, config: ConfigFile) -> Settings:
        root = config.path.parent if config.path else self._cwd
        exclude, extend_exclude, per_file_ignores, extend_per_file_ignores = self._path_options
        if exclude is None:
            exclude = tuple(RootedPattern(pattern, root) for pattern in config.exclude)
        if per_file_ignores is None:
            per_file_ignores = tuple((RootedPattern(pattern, root), codes)
                                     for pattern, codes in config.per_file_ignores)
        return Settings(
            root=root,
            config_path=config.path,
            rules=select_rules(self._rules, (config.selection, self._command_line)),
            exclude=exclude + extend_exclude,
            per_file_ignores=per_file_ignores + extend_per_file_ignores,
            max_file_size=config.max_file_size,
            file_errors_ignored=FileError.code in (*config.selection.ignore, *self._command_line.ignore),
            error=config.error,
        )

    def _read_config(self, path: Path) -> Optional[ConfigFile]:
        """The configuration in ``path``, None if it has none. One that is broken stops only the
        files it governs (``ConfigFile.error``); a broken file that is not ours (a vendored
        package's, a test fixture's) is passed over with a warning."""
        try:
            table = read_pyproject(path)
            return parse_config(table, path, self._rules) if table is not None else None
        except ConfigError as error:
            if error.ours:
                return ConfigFile(path=path, error=str(error))
            warn(f"{error}; ignored (it does not configure torchmemlint)")
            return None
        except UsageError as error:
            return ConfigFile(path=path, error=str(error))

    def _nearest_config(self, folder: Path) -> Optional[ConfigFile]:
        visited = []
        current: Optional[Path] = folder
        config: Optional[ConfigFile] = None
        while current is not None:
            if current in self._config_by_folder:
                config = self._config_by_folder[current]
                break
            visited.append(current)
            candidate = current / CONFIG_FILE_NAME
            config = self._read_config(candidate) if os.path.isfile(candidate) else None
            if config is not None:
                break
            current = None if current.parent == current else current.parent
        for seen in visited:
            self._config_by_folder[seen] = config
        return config


def _rooted_path_options(options: PathOptions, rules: Sequence[Rule], cwd: Path) -> tuple:
    """The command line's patterns compiled and anchored at the working directory."""
    def rooted(text: str, option: str) -> RootedPattern:
        try:
            return RootedPattern(PathPattern.compile(text), cwd)
        except ValueError as error:
            raise UsageError(f"{option}: {error}") from None

    exclude = None if options.exclude is None else \
        tuple(rooted(text, "--exclude") for text in options.exclude)
    extend_exclude = tuple(rooted(text, "--extend-exclude") for text in options.extend_exclude)
    def rooted_ignores(entries, option: str) -> tuple[tuple[RootedPattern, tuple[str, ...]], ...]:
        return tuple((rooted(glob, option), check_selectors(codes, rules, f"{option} {glob}"))
                     for glob, codes in entries)

    per_file_ignores = None if options.per_file_ignores is None else \
        rooted_ignores(options.per_file_ignores, "--per-file-ignores")
    extend_per_file_ignores = rooted_ignores(options.extend_per_file_ignores, "--extend-per-file-ignores")
    return exclude, extend_exclude, per_file_ignores, extend_per_file_ignores


def format_settings(path: str, settings: Settings) -> str:
    """``check --show-settings``: what decides how ``path`` is checked, one setting a line."""
    def patterns(rooted: Sequence[RootedPattern]) -> str:
        return "[" + ", ".join(f"{p.pattern.text!r} (in {p.root})" for p in rooted) + "]"

    lines = [
        f"Resolved settings for: {os.path.abspath(path)}",
        f"Settings path: {settings.config_path or 'none (defaults)'}",
        f"root = {settings.root}",
        f"rules ({len(settings.rules_for(path))}) = [{', '.join(r.code for r in settings.rules_for(path))}]",
        f"selected rules ({len(settings.rules)}) = [{', '.join(r.code for r in settings.rules)}]",
        f"exclude = {patterns(settings.exclude)}",
        "per-file-ignores = {" + ", ".join(f"{p.pattern.text!r} (in {p.root}): [{', '.join(codes)}]"
                                            for p, codes in settings.per_file_ignores) + "}",
        f"max-file-size = {settings.max_file_size}",
    ]
    return "\n".join(lines)
