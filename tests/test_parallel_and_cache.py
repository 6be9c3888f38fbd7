"""Worker processes and the result cache never change results: the same diagnostics (every
field, fixes included) and errors, in the same order, with ``-j 1`` and ``-j 2``, with and
without a cache, cold and warm, on every fixture and the whole installed torch package; a
changed file or rule selection is checked afresh; a corrupt entry is ignored; and a warm run
loads neither LibCST nor the engine."""
from __future__ import annotations

import dataclasses
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from support import LEAKING_SCRIPT, REPO_ROOT, module_env, write
from torchmemlint import api, cli
from torchmemlint.cache import CACHE_FOLDER_NAME, ResultCache, project_root

# (one xdist worker runs this module: its module fixtures are computed once, not once per worker)
pytestmark = pytest.mark.xdist_group("test_parallel_and_cache")

FIXTURES = REPO_ROOT / "fixtures"


def _results(results) -> list[tuple]:
    """Everything a result carries, fixes included (``Diagnostic`` compares only positions)."""
    return [(r.path, [dataclasses.astuple(d) for d in r.diagnostics], [dataclasses.astuple(e) for e in r.errors])
            for r in results]


@pytest.fixture(scope="module")
def fixture_tasks() -> list[api.FileTask]:
    tasks = list(api.plan([str(FIXTURES)]))
    assert len(tasks) > 20
    return tasks


@pytest.fixture(scope="module")
def reference(fixture_tasks) -> list[tuple]:
    results = _results(api.check_tasks(fixture_tasks, jobs=1))
    assert any(diagnostics for _, diagnostics, _ in results)
    return results


def test_two_workers_give_the_same_results_in_the_same_order(fixture_tasks, reference):
    assert _results(api.check_tasks(fixture_tasks, jobs=2)) == reference


def test_results_do_not_depend_on_the_string_hash_seed(tmp_path):
    """Python salts ``str`` hashes per process: nothing shown may follow the order of a set of
    names (a why chain once named whichever argument such a set gave first)."""
    reports = REPO_ROOT / "bench" / "reports" / "loss_accumulation"
    outputs = []
    for seed in ("1", "2", "3"):
        completed = subprocess.run(
            [sys.executable, "-m", "torchmemlint", "check", "--select", "ALL", "--no-cache", "--format", "json",
             "-j", "1", str(reports)],
            cwd=tmp_path, env=dict(module_env(), PYTHONHASHSEED=seed), capture_output=True, text=True, timeout=600)
        assert completed.returncode == 1, completed.stderr[-2000:]
        outputs.append(completed.stdout)
    assert any(finding["related"] for finding in json.loads(outputs[0]))
    assert outputs[1] == outputs[0] and outputs[2] == outputs[0]


def test_cold_and_warm_cache_give_the_same_results(fixture_tasks, reference, tmp_path):
    cache = ResultCache(tmp_path / CACHE_FOLDER_NAME)
    assert _results(api.check_tasks(fixture_tasks, jobs=2, cache=cache)) == reference
    assert len(list(cache.folder.iterdir())) == len(fixture_tasks)
    assert _results(api.check_tasks(fixture_tasks, jobs=1, cache=cache)) == reference


def test_warm_run_answers_from_the_cache_without_checking(fixture_tasks, reference, tmp_path, monkeypatch):
    cache = ResultCache(tmp_path / CACHE_FOLDER_NAME)
    list(api.check_tasks(fixture_tasks, jobs=1, cache=cache))
    monkeypatch.setattr(api, "check_file", lambda *args: pytest.fail("a cached file was checked again"))
    assert _results(api.check_tasks(fixture_tasks, jobs=2, cache=cache)) == reference


def test_installed_torch_same_with_workers_and_cache(tmp_path):
    """Every fourth file of the installed torch package (about 600 of 2,300, in path order: the
    whole package three times over took a fifth of the suite), the default rules: ``-j 1``
    filling a cold cache, ``-j 2`` without one and ``-j 2`` from the warm cache give the same
    results. (A cold cache stores what the check computes; only reading it back could change
    anything.)"""
    spec = importlib.util.find_spec("torch")  # found, not imported
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch is not installed")
    tasks = sorted(api.plan([next(iter(spec.submodule_search_locations))]), key=lambda task: task.path)[::4]
    assert len(tasks) > 250
    cache = ResultCache(tmp_path / CACHE_FOLDER_NAME)
    serial = _results(api.check_tasks(tasks, jobs=1, cache=cache))
    assert any(diagnostics for _, diagnostics, _ in serial)
    assert _results(api.check_tasks(tasks, jobs=2)) == serial
    assert _results(api.check_tasks(tasks, jobs=2, cache=cache)) == serial


def _checked_paths(monkeypatch) -> list[str]:
    """Records the files that ``check_file`` really checks (in this process: ``jobs=1``)."""
    checked: list[str] = []
    original = api.check_file

    def recording(task, cache=None):
        checked.append(Path(task.path).name)
        return original(task, cache)

    monkeypatch.setattr(api, "check_file", recording)
    return checked


def test_changed_content_and_selection_miss_the_cache(tmp_path, monkeypatch):
    write(tmp_path, "train.py", LEAKING_SCRIPT)
    write(tmp_path, "other.py", LEAKING_SCRIPT)
    cache = ResultCache(tmp_path / CACHE_FOLDER_NAME)
    monkeypatch.chdir(tmp_path)
    checked = _checked_paths(monkeypatch)

    def run(**options) -> list[tuple]:
        checked.clear()
        return _results(api.check_paths(["."], jobs=1, cache=cache, **options))

    first = run()
    assert sorted(checked) == ["other.py", "train.py"] and all(d for _, d, _ in first)
    assert run() == first and checked == []
    write(tmp_path, "train.py", LEAKING_SCRIPT.replace("losses.append(loss)", "losses.append(loss.item())"))
    changed = run()
    assert checked == ["train.py"]
    assert changed[0] == first[0] and changed[1][1] == []  # other.py, then train.py
    assert run(select=["TML002"]) == [(path, [], []) for path, _, _ in first]
    assert sorted(checked) == ["other.py", "train.py"]


def test_new_tool_version_misses_the_cache_and_drops_old_entries(tmp_path):
    folder = tmp_path / CACHE_FOLDER_NAME
    task = api.FileTask("train.py", ("TML001",), 1000)
    old = ResultCache(folder, fingerprint="old")
    old.put(old.key(task, b"x"), [], [])
    new = ResultCache(folder, fingerprint="new")
    assert new.get(new.key(task, b"x")) is None
    new.put(new.key(task, b"x"), [], [])
    assert sorted(p.name for p in folder.iterdir()) == [".gitignore", "CACHEDIR.TAG", "new"]


@pytest.mark.parametrize("content", [b"", b"{not json", b'{"diagnostics": [[1, 2]], "errors": []}', b"[]"])
def test_corrupt_entry_is_a_miss(tmp_path, content, monkeypatch):
    write(tmp_path, "train.py", LEAKING_SCRIPT)
    monkeypatch.chdir(tmp_path)
    cache = ResultCache(tmp_path / CACHE_FOLDER_NAME)
    [task] = api.plan(["train.py"])
    expected = _results([api.check_file(task)])
    cache.folder.mkdir(parents=True)
    (cache.folder / cache.key(task, LEAKING_SCRIPT.encode())).write_bytes(content)
    assert _results(api.check_tasks([task], cache=cache)) == expected
    assert _results(api.check_tasks([task], cache=cache)) == expected  # rewritten, now valid


def test_unwritable_cache_only_costs_speed(tmp_path, monkeypatch):
    write(tmp_path, "train.py", LEAKING_SCRIPT)
    (tmp_path / "blocked").write_text("a file where the cache folder would go")
    monkeypatch.chdir(tmp_path)
    [task] = api.plan(["train.py"])
    cache = ResultCache(tmp_path / "blocked" / CACHE_FOLDER_NAME)
    assert _results(api.check_tasks([task], cache=cache)) == _results([api.check_file(task)])


def test_project_root_is_the_nearest_folder_with_pyproject_or_git(tmp_path):
    write(tmp_path, "repo/.git/HEAD", "ref: refs/heads/main\n")
    write(tmp_path, "repo/pkg/pyproject.toml", "")
    write(tmp_path, "repo/pkg/src/a.py", "")
    assert project_root(tmp_path / "repo" / "pkg" / "src") == tmp_path / "repo" / "pkg"
    assert project_root(tmp_path / "repo" / "docs") == tmp_path / "repo"


def test_cli_cache_lands_in_the_project_root_and_no_cache_writes_nothing(tmp_path, monkeypatch, capsys):
    write(tmp_path, "pyproject.toml", "")
    write(tmp_path, "src/train.py", LEAKING_SCRIPT)
    monkeypatch.chdir(tmp_path / "src")
    assert cli.main(["check", "--no-cache", "-j", "1", "."]) == 1
    assert not (tmp_path / CACHE_FOLDER_NAME).exists()
    first = capsys.readouterr()
    assert cli.main(["check", "-j", "2", "."]) == 1
    assert (tmp_path / CACHE_FOLDER_NAME / ".gitignore").read_text().splitlines()[-1] == "*"
    assert cli.main(["check", "."]) == 1
    assert capsys.readouterr().out == first.out * 2


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_bad_jobs_is_a_usage_error(value, capsys):
    assert cli.main(["check", "-j", value, "."]) == 2
    assert "expected a positive whole number" in capsys.readouterr().err


def test_warm_run_loads_neither_libcst_nor_the_engine(tmp_path):
    write(tmp_path, "pyproject.toml", "")
    write(tmp_path, "train.py", LEAKING_SCRIPT)
    program = (
        "import sys\n"
        "from torchmemlint import cli\n"
        "status = cli.main(['check', '-j', '1', '.'])\n"
        "print(status, 'libcst._nodes' in sys.modules, 'torchmemlint.engine' in sys.modules)\n"
    )
    runs = [subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=module_env(),
                           capture_output=True, text=True, timeout=120) for _ in range(2)]
    assert [r.stdout.splitlines()[-1] for r in runs] == ["1 True True", "1 False False"], runs


def test_file_no_rule_could_match_in_loads_no_libcst(tmp_path):
    write(tmp_path, "tool.py", "import os\nprint(os.getcwd())\n")
    program = (
        "import sys\n"
        "from torchmemlint import cli\n"
        "status = cli.main(['check', '--no-cache', 'tool.py'])\n"
        "print(status, 'libcst._nodes' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=module_env(),
                            capture_output=True, text=True, timeout=120)
    assert result.stdout.splitlines()[-1] == "0 False", result
