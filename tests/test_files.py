"""Discovery (excludes, .gitignore, named files), reading bad files, atomic writes."""
import json
import os
import shutil
import stat
import subprocess
import tempfile
import traceback
from pathlib import Path

import pytest

from support import write
from torchmemlint.api import plan
from torchmemlint.diagnostics import FileError
from torchmemlint.files import read_source, write_atomic


def discovered(*paths, **options):
    return [task.path for task in plan(list(paths), **options)]


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def git_init(folder):
    subprocess.run(["git", "init", "-q", str(folder)], check=True)


def test_walk_finds_python_files_in_sorted_order_and_skips_default_excludes(project):
    for name in ["b.py", "a.py", "pkg/z.py", "pkg/sub/y.py", "notes.txt", "pkg/data.json",
                 "build/gen.py", ".venv/lib/x.py", "pkg/__pycache__/c.py", "node_modules/n.py",
                 "pkg.egg-info/e.py", ".git/hooks/h.py", "dist/d.py", "site-packages/s.py"]:
        write(project, name, "x = 1\n")
    assert discovered(".") == ["a.py", "b.py", "pkg/sub/y.py", "pkg/z.py"]


def test_virtual_environment_with_any_name_is_skipped(project):
    write(project, "myenv/pyvenv.cfg", "home = /usr/bin\n")
    write(project, "myenv/lib/python3.11/site.py", "x = 1\n")
    write(project, "env/train.py", "x = 1\n")  # a package named env is not a virtualenv
    assert discovered(".") == ["env/train.py"]


def test_named_file_is_checked_even_if_excluded_unless_force_exclude(project):
    write(project, "build/gen.py", "x = 1\n")
    assert discovered("build/gen.py") == ["build/gen.py"]
    assert discovered("build/gen.py", force_exclude=True) == []
    assert discovered("build") == ["build/gen.py"]
    assert discovered("build", force_exclude=True) == []


def test_named_file_is_deduplicated_and_paths_normalised(project):
    write(project, "src/a.py", "x = 1\n")
    assert discovered("src", "./src/a.py", "src/") == ["src/a.py"]


def test_named_non_python_files_are_skipped_but_python_scripts_are_kept(project):
    write(project, "README.md", "# hi\n")
    write(project, "tool", "#!/usr/bin/env python3\nx = 1\n")
    assert discovered("README.md", "tool") == ["tool"]
    os.mkfifo(project / "pipe")  # not opened (that would block): reading reports it
    assert discovered("pipe") == ["pipe"]


def test_missing_path_is_kept_so_that_reading_reports_it(project):
    assert discovered("nope.py", "missing_dir") == ["missing_dir", "nope.py"]


def test_gitignore_patterns_negation_and_nesting(project):
    git_init(project)
    write(project, ".gitignore", "generated/\n*_pb2.py\n/top_only.py\n")
    write(project, "pkg/.gitignore", "!keep_pb2.py\nlocal.py\n")
    for name in ["generated/a.py", "msg_pb2.py", "pkg/msg_pb2.py", "pkg/keep_pb2.py",
                 "top_only.py", "pkg/top_only.py", "pkg/local.py", "local.py", "train.py"]:
        write(project, name, "x = 1\n")
    assert discovered(".") == ["local.py", "pkg/keep_pb2.py", "pkg/top_only.py", "train.py"]
    # Checking a subfolder still honours the .gitignore files above it, up to the repository.
    assert discovered("pkg") == ["pkg/keep_pb2.py", "pkg/top_only.py"]


def test_gitignore_outside_a_git_repository_means_nothing(project):
    write(project, ".gitignore", "*.py\n")
    write(project, "a.py", "x = 1\n")
    assert discovered(".") == ["a.py"]


def test_exclude_replaces_defaults_and_extend_exclude_adds(project):
    write(project, "build/gen.py", "x = 1\n")
    write(project, "legacy/old.py", "x = 1\n")
    write(project, "src/legacy/keep.py", "x = 1\n")
    write(project, "src/vendor/v.py", "x = 1\n")
    write(project, "pyproject.toml", '[tool.torchmemlint]\nexclude = ["/legacy"]\n')
    assert discovered(".") == ["build/gen.py", "src/legacy/keep.py", "src/vendor/v.py"]
    write(project, "pyproject.toml", '[tool.torchmemlint]\nextend-exclude = ["vendor/", "src/legacy"]\n')
    assert discovered(".") == ["legacy/old.py"]


def test_exclude_patterns_are_relative_to_the_configuration_folder(project):
    write(project, "proj/pyproject.toml", '[tool.torchmemlint]\nextend-exclude = ["/scripts"]\n')
    write(project, "proj/scripts/s.py", "x = 1\n")
    write(project, "proj/src/scripts/t.py", "x = 1\n")
    assert discovered("proj") == ["proj/src/scripts/t.py"]


# --- reading -------------------------------------------------------------------------------

def test_read_source_returns_bytes_untouched(tmp_path):
    data = b"\xef\xbb\xbfx = 1\r\ny = 2\r\n"
    assert read_source(str(write(tmp_path, "a.py", data))) == data
    assert read_source(str(write(tmp_path, "empty.py", b""))) == b""


@pytest.mark.parametrize("make, message", [
    (lambda d: None, "no such file or directory"),
    (lambda d: os.symlink(d / "nowhere", d / "x.py"), "broken symbolic link"),
    (lambda d: os.mkdir(d / "x.py"), "is a directory"),
    (lambda d: os.mkfifo(d / "x.py"), "not a regular file"),
    (lambda d: (d / "x.py").write_bytes(b"x = 1\ny = '\0'\n"), "NUL byte"),
])
def test_read_source_reports_files_it_cannot_read(tmp_path, make, message):
    make(tmp_path)
    error = read_source(str(tmp_path / "x.py"))
    assert isinstance(error, FileError) and message in error.message


def test_nul_byte_position_is_reported(tmp_path):
    error = read_source(str(write(tmp_path, "x.py", b"x = 1\nab\0\n")))
    assert (error.line, error.column) == (2, 2)


def test_file_over_the_size_limit_is_reported(tmp_path):
    path = write(tmp_path, "big.py", b"x = 1\n" * 100)
    assert read_source(str(path), max_size=600) == b"x = 1\n" * 100
    error = read_source(str(path), max_size=599)
    assert isinstance(error, FileError) and "over the limit" in error.message


def as_unprivileged_user(function):
    """``function()``'s (JSON-able) value, computed where file permissions apply: as the current
    user, or, for root (who reads everything), in a forked child that has become "nobody"."""
    if os.geteuid() != 0:
        return function()
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        try:
            os.setuid(65534)
            outcome = {"value": function()}
        except BaseException:
            outcome = {"error": traceback.format_exc()}
        os.write(writer, json.dumps(outcome).encode())
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader) as pipe:
        outcome = json.loads(pipe.read())
    os.waitpid(child, 0)
    assert "error" not in outcome, outcome["error"]
    return outcome["value"]


@pytest.fixture
def shared_tmp(monkeypatch):
    """A folder the unprivileged user may enter (pytest's tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp())
    folder.chmod(0o755)
    monkeypatch.chdir(folder)
    yield folder
    for path in folder.rglob("*"):
        if path.is_dir():
            path.chmod(0o755)
    shutil.rmtree(folder)


def test_unreadable_file_is_reported(shared_tmp):
    path = write(shared_tmp, "secret.py", "x = 1\n")
    path.chmod(0)
    assert as_unprivileged_user(lambda: read_source(str(path)).message) == \
        "cannot read file: permission denied"


def test_unlistable_folder_is_reported_not_skipped(shared_tmp):
    write(shared_tmp, "private/train.py", "x = 1\n")
    write(shared_tmp, "public/train.py", "x = 1\n")
    (shared_tmp / "private").chmod(0)

    def checked():
        return [[task.path, getattr(read_source(task.path), "message", "readable")]
                for task in plan(["."])]
    assert as_unprivileged_user(checked) == [["private", "cannot read folder: permission denied"],
                                             ["public/train.py", "readable"]]


# --- writing -------------------------------------------------------------------------------

def test_write_atomic_replaces_content_and_keeps_mode(tmp_path):
    path = write(tmp_path, "script.py", "old\n")
    path.chmod(0o751)
    write_atomic(path, b"new\r\n")
    assert path.read_bytes() == b"new\r\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert os.listdir(tmp_path) == ["script.py"]  # no temporary file left behind


def test_write_atomic_through_a_symlink_keeps_the_link(tmp_path):
    target = write(tmp_path, "real.py", "old\n")
    link = tmp_path / "link.py"
    link.symlink_to(target)
    write_atomic(link, b"new\n")
    assert link.is_symlink() and target.read_bytes() == b"new\n"


def test_write_atomic_failure_leaves_the_original_and_no_temporary(tmp_path, monkeypatch):
    path = write(tmp_path, "script.py", "old\n")

    def failing_replace(source, destination):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError):
        write_atomic(path, b"new\n")
    assert path.read_bytes() == b"old\n"
    assert os.listdir(tmp_path) == ["script.py"]


def test_write_atomic_creates_a_new_file(tmp_path):
    write_atomic(tmp_path / "new.py", b"x = 1\n")
    assert (tmp_path / "new.py").read_bytes() == b"x = 1\n"
