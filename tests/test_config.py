"""Rule selection and [tool.torchmemlint] settings, with stand-in rules so that every selection
case (off-by-default rules included) is covered whatever the real catalogue holds."""
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from support import write
from torchmemlint import config
from torchmemlint.config import RuleSelection, SettingsResolver, UsageError, select_rules


@dataclass(frozen=True)
class StandInRule:
    code: str
    default_enabled: bool = True


RULES = [StandInRule("TML001"), StandInRule("TML002"), StandInRule("TML009", False),
         StandInRule("TML011", False), StandInRule("TML012")]


def codes(rules):
    return [rule.code for rule in rules]


@pytest.mark.parametrize("layers, expected", [
    ([], ["TML001", "TML002", "TML012"]),
    ([RuleSelection(select=("TML00",))], ["TML001", "TML002"]),
    ([RuleSelection(select=("TML",))], ["TML001", "TML002", "TML012"]),  # no off-by-default
    ([RuleSelection(select=("TML0",))], ["TML001", "TML002", "TML012"]),
    ([RuleSelection(select=("TML009",))], ["TML009"]),
    ([RuleSelection(extend_select=("TML009",))], ["TML001", "TML002", "TML009", "TML012"]),
    ([RuleSelection(extend_select=("TML00",))], ["TML001", "TML002", "TML012"]),
    ([RuleSelection(ignore=("TML001",))], ["TML002", "TML012"]),
    ([RuleSelection(select=("TML00",), ignore=("TML00",))], []),  # ignore wins a tie
    ([RuleSelection(select=("TML001",), ignore=("TML00",))], ["TML001"]),  # longer select wins
    ([RuleSelection(select=("TML0",), ignore=("TML001",))], ["TML002", "TML012"]),
    ([RuleSelection(select=("TML009",), ignore=("TML009",))], []),
    # The command line's layer comes after the configuration's.
    ([RuleSelection(ignore=("TML002",)), RuleSelection(extend_select=("TML011",))],
     ["TML001", "TML011", "TML012"]),
    ([RuleSelection(select=("TML009",)), RuleSelection(ignore=("TML001",))], ["TML009"]),
    ([RuleSelection(ignore=("TML001",)), RuleSelection(select=("TML001",))], ["TML001"]),
    ([RuleSelection(extend_select=("TML009",)), RuleSelection(select=("TML",))],
     ["TML001", "TML002", "TML012"]),
    # ``ALL`` (ruff's spelling) selects every rule, off-by-default ones too, least specifically.
    ([RuleSelection(select=("ALL",))], ["TML001", "TML002", "TML009", "TML011", "TML012"]),
    ([RuleSelection(select=("ALL",), ignore=("TML00",))], ["TML011", "TML012"]),
    ([RuleSelection(select=("TML001",), ignore=("ALL",))], ["TML001"]),
    ([RuleSelection(select=("ALL",), ignore=("ALL",))], []),
    ([RuleSelection(extend_select=("ALL",))], ["TML001", "TML002", "TML009", "TML011", "TML012"]),
])
def test_rule_selection(layers, expected):
    assert codes(select_rules(RULES, layers)) == expected


def test_selectors_are_normalised_and_unknown_ones_rejected():
    assert config.check_selectors([" tml001", "TML0", ""], RULES, "--select") == ("TML001", "TML0")
    assert config.check_selectors(["all"], RULES, "--select") == ("ALL",)
    with pytest.raises(UsageError, match="unknown rule code or prefix 'TML999' in --select"):
        config.check_selectors(["TML999"], RULES, "--select")
    with pytest.raises(UsageError, match="'E501'"):
        SettingsResolver(RULES, RuleSelection(ignore=("E501",)))


def resolver_in(folder, monkeypatch, **options):
    monkeypatch.chdir(folder)
    return SettingsResolver(RULES, **options)


def settings_codes(resolver, path):
    return codes(resolver.settings_for_file(path).rules_for(path))


def test_nearest_pyproject_with_the_section_wins(tmp_path, monkeypatch):
    write(tmp_path, "pyproject.toml", '[tool.torchmemlint]\nignore = ["TML001"]\n')
    write(tmp_path, "a/pyproject.toml", '[project]\nname = "a"\n')  # no section: keep looking
    write(tmp_path, "a/b/pyproject.toml", '[tool.torchmemlint]\nextend-select = ["TML009"]\n')
    resolver = resolver_in(tmp_path, monkeypatch)
    assert settings_codes(resolver, "a/x.py") == ["TML002", "TML012"]
    assert settings_codes(resolver, "a/b/c/x.py") == ["TML001", "TML002", "TML009", "TML012"]
    assert resolver.settings_for_file("a/x.py").config_path == tmp_path / "pyproject.toml"


def test_configuration_lookups_are_cached(tmp_path, monkeypatch):
    write(tmp_path, "pyproject.toml", '[tool.torchmemlint]\nignore = ["TML001"]\n')
    reads = []
    original = config.read_pyproject
    monkeypatch.setattr(config, "read_pyproject", lambda path: reads.append(path) or original(path))
    resolver = resolver_in(tmp_path, monkeypatch)
    for name in ["a/b/x.py", "a/b/y.py", "a/z.py", "w.py"]:
        resolver.settings_for_file(name)
    assert reads == [tmp_path / "pyproject.toml"]


def test_command_line_is_applied_on_top_of_the_file(tmp_path, monkeypatch):
    write(tmp_path, "pyproject.toml", '[tool.torchmemlint]\nselect = ["TML001", "TML009"]\n')
    resolver = resolver_in(tmp_path, monkeypatch, command_line=RuleSelection(ignore=("TML009",)))
    assert settings_codes(resolver, "x.py") == ["TML001"]
    resolver = resolver_in(tmp_path, monkeypatch, command_line=RuleSelection(select=("TML002",)))
    assert settings_codes(resolver, "x.py") == ["TML002"]


def test_explicit_config_replaces_the_search(tmp_path, monkeypatch):
    write(tmp_path, "pyproject.toml", '[tool.torchmemlint]\nignore = ["TML001"]\n')
    write(tmp_path, "other/custom.toml", '[tool.torchmemlint]\nselect = ["TML012"]\n')
    resolver = resolver_in(tmp_path, monkeypatch, config_path="other/custom.toml")
    assert settings_codes(resolver, "x.py") == ["TML012"]
    assert resolver.settings_for_file("x.py").root == tmp_path / "other"
    with pytest.raises(UsageError, match="--config missing.toml: no such file"):
        resolver_in(tmp_path, monkeypatch, config_path="missing.toml")


def test_per_file_ignores(tmp_path, monkeypatch):
    write(tmp_path, "pyproject.toml", '[tool.torchmemlint.per-file-ignores]\n'
                                      '"tests/*.py" = ["TML001"]\n'
                                      '"conftest.py" = ["TML00"]\n'
                                      '"scripts/**" = ["TML012", "TML002"]\n')
    resolver = resolver_in(tmp_path, monkeypatch)
    assert settings_codes(resolver, "tests/test_a.py") == ["TML002", "TML012"]
    assert settings_codes(resolver, "tests/deep/test_a.py") == ["TML001", "TML002", "TML012"]
    assert settings_codes(resolver, "pkg/conftest.py") == ["TML012"]
    assert settings_codes(resolver, "scripts/a/b.py") == ["TML001"]
    assert settings_codes(resolver, "train.py") == ["TML001", "TML002", "TML012"]


@pytest.mark.parametrize("toml, message", [
    ('[tool.torchmemlint\nselect = 1\n', "invalid TOML"),
    ('[tool.torchmemlint]\nselct = ["TML001"]\n', "selct: unknown option"),
    ('[tool.torchmemlint]\nselect = "TML001"\n', "select: expected a list of strings"),
    ('[tool.torchmemlint]\nselect = ["TML999"]\n', "unknown rule code or prefix 'TML999'"),
    ('[tool.torchmemlint]\nignore = ["XYZ"]\n', "'XYZ' in"),
    ('[tool.torchmemlint]\nexclude = [""]\n', "empty path pattern"),
    ('[tool.torchmemlint]\nextend-exclude = ["[z-a]"]\n', "invalid path pattern"),
    ('[tool.torchmemlint]\nper-file-ignores = ["a"]\n', "expected a table"),
    ('[tool.torchmemlint.per-file-ignores]\n"a.py" = ["TML9"]\n', "'TML9'"),
    ('[tool.torchmemlint]\nmax-file-size = -1\n', "expected a positive number"),
    ('[tool]\ntorchmemlint = 3\n', "must be a table"),
])
def test_bad_configuration_is_one_clear_error(tmp_path, monkeypatch, toml, message):
    """Found above a file, it is that file's error (its files are not checked); named with
    ``--config``, it stops the run."""
    write(tmp_path, "pyproject.toml", toml)
    error = resolver_in(tmp_path, monkeypatch).settings_for_file("x.py").error
    assert re.search(message, error) and str(tmp_path / "pyproject.toml") in error
    assert "\n" not in error.strip()
    with pytest.raises(UsageError, match=message):
        SettingsResolver(RULES, config_path=str(tmp_path / "pyproject.toml"))


def test_max_file_size_setting(tmp_path, monkeypatch):
    write(tmp_path, "pyproject.toml", '[tool.torchmemlint]\nmax-file-size = 1234\n')
    assert resolver_in(tmp_path, monkeypatch).settings_for(Path(tmp_path)).max_file_size == 1234
