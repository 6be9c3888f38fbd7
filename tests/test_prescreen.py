"""The pre-screen never changes results: every fixture, the installed torch package and a few
tricky sources give the same diagnostics and errors with ``Rule.could_match`` as with the
rules' text triggers alone; syntax errors come from CPython's parser, for every file."""
from __future__ import annotations

import importlib.util
import multiprocessing
import os
from pathlib import Path

import pytest

from torchmemlint.diagnostics import FileError
from torchmemlint.engine import check_source
from torchmemlint.rules import ALL_RULES
from torchmemlint.semantics.prescreen import FileFacts, scan

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
BENCH = Path(__file__).resolve().parent.parent / "bench"


def _torch_dir() -> Path | None:
    spec = importlib.util.find_spec("torch")  # found, not imported
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _turned_away_findings(path: Path) -> tuple[int, list[tuple[str, int, str]]]:
    """How many rules the pre-screen turns away from a file (text-triggered, yet ``could_match``
    says no), and what they find there when run anyway. The screened check runs the other rules
    exactly as the unscreened one does, so the findings are empty if and only if both give the
    same diagnostics and errors; it costs one LibCST parse of the file, not two."""
    source = path.read_bytes()
    facts = scan(source, str(path))
    if isinstance(facts, FileError):
        return 0, []  # both checks stop at the same error
    turned_away = [rule for rule in ALL_RULES if rule.triggered(source) and not rule.could_match(facts)]
    if not turned_away:
        return 0, []
    diagnostics, errors = check_source(source, str(path), turned_away, prescreen=False)
    return len(turned_away), [(str(path), d.line, d.code) for d in diagnostics] + \
        [(str(path), e.line, e.message) for e in errors]


def _assert_same_with_and_without_prescreen(paths: list[Path]) -> None:
    """On every core; some rule must have been turned away somewhere, or nothing was tested."""
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
    with context.Pool(os.cpu_count() or 1) as pool:
        results = list(pool.imap_unordered(_turned_away_findings, paths, chunksize=8))
    assert sum(turned for turned, _ in results) > 0
    assert [found for _, found in results if found] == []


def test_fixtures_same_with_and_without_prescreen() -> None:
    _assert_same_with_and_without_prescreen(sorted(FIXTURES.rglob("*.py")))


def test_bench_corpora_same_with_and_without_prescreen() -> None:
    """The benchmark's labelled cases and samples: code written apart from the fixtures."""
    _assert_same_with_and_without_prescreen(sorted(BENCH.rglob("*.py")))


def test_installed_torch_same_with_and_without_prescreen() -> None:
    """Every other file of the installed torch package (about 1,150 of 2,300, in path order; the
    whole package took an eighth of the suite)."""
    torch_dir = _torch_dir()
    if torch_dir is None:
        pytest.skip("torch is not installed")
    paths = sorted(torch_dir.rglob("*.py"))[::2]
    assert len(paths) > 500
    _assert_same_with_and_without_prescreen(paths)


TRAIN_WITHOUT_TORCH_IMPORT = """\
def train(model, loader, opt):
    losses = []
    for x, y in loader:
        opt.zero_grad()
        loss = model(x).sum()
        loss.backward()
        opt.step()
        losses.append(loss)
    return [l.item() for l in losses]
"""
# What LibCST sees of a loop's iterable includes comments inside it ("loader" marks a step loop).
COMMENT_IN_ITERABLE = """\
def run(model, a, b):
    outputs = []
    for x in zip(a,  # from the train loader
                 b):
        outputs.append(model(x))
    return len(outputs)
"""
ONE_LINE_LOOP = """\
def run(model, loader, total=0):
    for x in loader: total += model(x)
    print(total)
"""
STEP_METHOD = """\
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        self.seen.append(self.encoder(x))
        return x
"""
EVAL_AFTER_TRAIN_FALSE = """\
def evaluate_all(net, batches):
    net.train(mode=False)
    return [net(b) for b in batches]
"""
# Keeping places count only where they may be in a step iteration: each of these reaches one
# through a function the file hands over or calls, never through the loop the store is in.
HOOK_LAMBDA = """\
import torch
acts = []
def attach(model):
    model.fc.register_forward_hook(lambda module, inputs, output: acts.append(output))
"""
STEP_CLOSURE = """\
def fit(model, solver, x, y, history):
    def closure():
        loss = model(x).sub(y).pow(2).mean()
        loss.backward()
        history.append(loss)
        return loss
    solver.step(closure)
"""
ALIASED_STEP = """\
import torch
class Trainer:
    def train_step(self, batch):
        loss = self.model(batch).sum()
        loss.backward()
        self.optimizer.step()
        self.history.append(loss)
def run(trainer, items):
    step = trainer.train_step
    for item in items:
        step(item)
"""
FED_BACK_PARAMETER = """\
def update(model, x, ema):
    loss = model(x).sum()
    loss.backward()
    ema = 0.9 * ema + 0.1 * loss
    return ema
def train(model, loader):
    ema = 0.0
    for x in loader:
        ema = update(model, x, ema)
"""
CALLED_FROM_PER_STEP_METHOD = """\
import torch.nn as nn
RECORDED = []
def record(value):
    RECORDED.append(value)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        out = self.fc(x)
        record(out)
        return out
"""
CALLED_FROM_STEP_FUNCTION = """\
history = []
def log_loss(loss):
    history.append(loss)
def train_step(model, optimizer, x):
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
    log_loss(loss)
def train(model, optimizer, loader):
    for x in loader:
        train_step(model, optimizer, x)
"""
OBJECTIVE_THROUGH_LAMBDA = """\
import optuna
scores = []
def objective(trial, model, loader):
    for x in loader:
        loss = model(x).sum()
        loss.backward()
    scores.append(loss)
    return loss.item()
study = optuna.create_study()
study.optimize(lambda trial: objective(trial, MODEL, LOADER), n_trials=10)
"""


@pytest.mark.parametrize("source, codes", [
    (TRAIN_WITHOUT_TORCH_IMPORT, {"TML001"}),
    (COMMENT_IN_ITERABLE, {"TML001"}),
    (ONE_LINE_LOOP, {"TML001"}),
    (STEP_METHOD, {"TML001"}),
    (EVAL_AFTER_TRAIN_FALSE, {"TML003"}),
    (HOOK_LAMBDA, {"TML001"}),
    (STEP_CLOSURE, {"TML001"}),
    (ALIASED_STEP, {"TML001", "TML002"}),  # (no zero_grad in the step the loop runs per item)
    (FED_BACK_PARAMETER, {"TML005"}),
    (CALLED_FROM_PER_STEP_METHOD, {"TML001"}),
    (CALLED_FROM_STEP_FUNCTION, {"TML001", "TML002"}),
    (OBJECTIVE_THROUGH_LAMBDA, {"TML001"}),
], ids=["no-torch-import", "comment-in-iterable", "one-line-loop", "per-step-method", "train-false", "hook-lambda",
        "step-closure", "aliased-step", "fed-back-parameter", "called-from-forward", "called-from-step-function",
        "objective-through-lambda"])
def test_tricky_sources_found_with_and_without_prescreen(source: str, codes: set[str]) -> None:
    screened = check_source(source.encode(), "train.py", ALL_RULES)
    reference = check_source(source.encode(), "train.py", ALL_RULES, prescreen=False)
    assert screened == reference
    assert {d.code for d in screened[0]} == codes


def test_file_nothing_could_match_in_is_not_parsed_by_libcst(monkeypatch) -> None:
    from torchmemlint import engine

    monkeypatch.setattr(engine, "parse", lambda *args: pytest.fail("LibCST parse of a file no rule could match"))
    assert check_source(b"import os\n\nprint(os.getcwd())\n", "tool.py", ALL_RULES) == ([], [])


# Stores in loops and functions that cannot run once per training step: a loop over layers, a
# helper whose total is its own, a local list of a method; the epoch loop (a step loop) keeps nothing.
NO_STEP_ITERATION = b"""\
import torch.nn as nn
def build(sizes):
    layers = []
    for size in sizes:
        layers.append(nn.Linear(size, size))
    return layers
def collect(values, total=0):
    for v in values:
        total += v
    return total / len(values)
class Report:
    def summary(self, rows):
        lines = []
        lines.append(str(rows))
        return lines
for epoch in range(3):
    print(epoch, collect(build([2, 3])))
"""


def test_stores_outside_any_step_iteration_are_not_parsed_by_libcst(monkeypatch) -> None:
    from torchmemlint import engine

    facts = scan(NO_STEP_ITERATION, "layers.py")
    assert facts.keeps  # stores and accumulations are there, in no iteration that may be a step
    monkeypatch.setattr(engine, "parse", lambda *args: pytest.fail("LibCST parse of a file no rule could match"))
    assert check_source(NO_STEP_ITERATION, "layers.py", ALL_RULES) == ([], [])


# Caches of functions that say they return no tensor (``-> bool``, ``-> tuple[int, int]``); the
# cached tensor function and the method are TML012's.
CACHED_PLAIN_VALUES = b"""\
import functools
@functools.cache
def has_triton() -> bool:
    return False
@functools.lru_cache(None)
def version(fallback: tuple[int, int] = (0, 0)) -> tuple[int, int]:
    return fallback
"""
CACHED_TENSORS = b"""\
import functools
import torch
@functools.cache
def grid(n: int) -> torch.Tensor:
    return torch.arange(n)
"""


def test_caches_of_plain_values_are_not_parsed_by_libcst(monkeypatch) -> None:
    from torchmemlint import engine
    from torchmemlint.rules.tml012_cached_tensor_function import CachedTensorFunction

    assert not CachedTensorFunction().could_match(scan(CACHED_PLAIN_VALUES, "versions.py"))
    assert CachedTensorFunction().could_match(scan(CACHED_TENSORS, "grids.py"))
    monkeypatch.setattr(engine, "parse", lambda *args: pytest.fail("LibCST parse of a file no rule could match"))
    assert check_source(CACHED_PLAIN_VALUES, "versions.py", ALL_RULES) == ([], [])


def test_syntax_error_is_reported_from_ast_even_without_trigger_words() -> None:
    diagnostics, errors = check_source(b"x = (1,\ny = 2\n", "broken.py", ALL_RULES)
    assert diagnostics == []
    assert len(errors) == 1
    assert errors[0].message.startswith("syntax error: ")
    assert "never closed" in errors[0].message  # CPython's own wording
    assert (errors[0].line, errors[0].column) == (1, 4)


@pytest.mark.parametrize("source, message", [
    ("name = 'caf\xe9'\n".encode("latin-1"), "cannot decode file"),
    (b"# -*- coding: no-such-codec -*-\nx = 1\n", "unknown encoding"),
    (b"x = 1\0\n", "syntax error"),
    (b"if x:\n\tpass\n        pass\n", "syntax error: inconsistent use of tabs"),
])
def test_bad_files_are_file_errors(source: bytes, message: str) -> None:
    facts = scan(source, "bad.py")
    assert not isinstance(facts, FileFacts)
    assert message in facts.message and facts.path == "bad.py"


def test_cookie_and_bom_decode_as_declared() -> None:
    latin1 = "# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n".encode("latin-1")
    assert isinstance(scan(latin1, "a.py"), FileFacts)
    assert isinstance(scan(b"\xef\xbb\xbfx = 1\n", "b.py"), FileFacts)
