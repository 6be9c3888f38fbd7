"""Does the cost of checking one file grow linearly with its size? Generates files of 1k, 2k, 4k
... lines in four shapes of training code and prints, per shape and size, the CPU time of a full
check (every rule, fixes' edits included, as ``check -j 1 --no-cache`` does for one file) next to
LibCST's parse alone, the time per line, and the growth ratio per doubling (2.0 is linear).

    python bench/scaling.py                      # 1k .. 64k lines, every shape
    python bench/scaling.py --max-lines 32000 --shapes functions,class
    python bench/scaling.py --profile huge_function:16000   # cProfile of one check, top 25
    python bench/scaling.py --each-rule              # every rule alone, 4k and 16k lines

Shapes (each a file whose every part is reachable by the semantic layer's queries):

- ``functions``: many small training and evaluation functions (8 lines each), every evaluation
  function called under ``torch.no_grad()`` by another, so "is this only called under no_grad?"
  is asked for each of them;
- ``huge_function``: one function whose body is thousands of training loops one after another;
- ``class``: one ``nn.Module``/trainer class with many methods that read and write ``self``
  attributes and call each other;
- ``nested``: functions whose training step sits under ten levels of ``for``/``if``/``with``;
- ``carried_state``: one module whose ``forward`` updates thousands of ``self`` states from their
  previous values, each reading the one before (what TML005 asks of every carried attribute);
- ``many_stores``: one training loop appending to thousands of lists, each emptied every N steps
  (what TML001 and TML004 ask of every container).

Times are CPU seconds of this process (``time.process_time``), the minimum of ``--repeat`` runs,
so other processes on a busy machine disturb them less than wall time.
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import sys
import time
from pathlib import Path
from typing import Callable

from lint import all_rules, lint

SIZES = (1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000)
HEADER = "import torch\nimport torch.nn as nn\nfrom torch.utils.data import DataLoader\n\n\n"


def small_functions(lines: int) -> str:
    chunks, index = [HEADER], 0
    while _count(chunks) < lines:
        chunks.append(
            f"def train_epoch_{index}(model, loader, optimizer, history):\n"
            f"    for batch in loader:\n"
            f"        optimizer.zero_grad()\n"
            f"        loss = model(batch).sum()\n"
            f"        loss.backward()\n"
            f"        optimizer.step()\n"
            f"        history.append({_kept('loss', index)})\n"
            f"    return evaluate_{index}(model, batch)\n\n\n"
            f"def score_{index}(model, batch):\n"
            f"    output = model(batch)\n"
            f"    return output.mean().item()\n\n\n"
            f"def evaluate_{index}(model, batch):\n"
            f"    with torch.no_grad():\n"
            f"        return score_{index}(model, batch)\n\n\n"
        )
        index += 1
    return "".join(chunks)


def huge_function(lines: int) -> str:
    chunks, index = [HEADER, "def train(model, loader, optimizer, criterion, history):\n"], 0
    while _count(chunks) < lines:
        chunks.append(
            f"    for step_{index}, (inputs, targets) in enumerate(loader):\n"
            f"        optimizer.zero_grad()\n"
            f"        outputs_{index} = model(inputs)\n"
            f"        loss_{index} = criterion(outputs_{index}, targets)\n"
            f"        loss_{index}.backward()\n"
            f"        optimizer.step()\n"
            f"        history.append({_kept(f'loss_{index}', index)})\n"
        )
        index += 1
    chunks.append("    return history\n")
    return "".join(chunks)


def one_class(lines: int) -> str:
    chunks = [HEADER, "class Trainer(nn.Module):\n"
                      "    def __init__(self, model, optimizer):\n"
                      "        super().__init__()\n"
                      "        self.model = model\n"
                      "        self.optimizer = optimizer\n"
                      "        self.history = []\n\n"]
    index = 0
    while _count(chunks) < lines:
        chunks.append(
            f"    def step_{index}(self, batch):\n"
            f"        self.optimizer.zero_grad()\n"
            f"        loss = self.model(batch).sum()\n"
            f"        loss.backward()\n"
            f"        self.optimizer.step()\n"
            f"        self.history.append({_kept('loss', index)})\n"
            f"        return self.check_{index}(batch)\n\n"
            f"    @torch.no_grad()\n"
            f"    def check_{index}(self, batch):\n"
            f"        self.last_{index} = self.model(batch).mean().item()\n"
            f"        return self.last_{index}\n\n"
        )
        index += 1
    return "".join(chunks)


def nested(lines: int) -> str:
    chunks, index = [HEADER], 0
    while _count(chunks) < lines:
        chunks.append(
            f"def train_{index}(model, loaders, optimizer, history, flags):\n"
            f"    for epoch in range(3):\n"
            f"        for loader in loaders:\n"
            f"            if flags.enabled:\n"
            f"                with torch.autocast('cuda'):\n"
            f"                    for batch in loader:\n"
            f"                        if batch is not None:\n"
            f"                            while flags.more:\n"
            f"                                try:\n"
            f"                                    with torch.enable_grad():\n"
            f"                                        for part in batch:\n"
            f"                                            optimizer.zero_grad()\n"
            f"                                            loss = model(part).sum()\n"
            f"                                            loss.backward()\n"
            f"                                            optimizer.step()\n"
            f"                                            history.append({_kept('loss', index)})\n"
            f"                                except RuntimeError:\n"
            f"                                    break\n\n\n"
        )
        index += 1
    return "".join(chunks)


def carried_state(lines: int) -> str:
    """One module whose ``forward`` updates thousands of ``self`` states from their previous
    values (a running statistic each; one in eight kept with its graph: a TML005 finding)."""
    count = max(1, (lines - 12) // 2)
    init = "".join(f"        self.s{i} = torch.zeros(4)\n" for i in range(count))
    steps = "".join(
        f"        self.s{i} = 0.9 * self.s{i}{'' if i % 8 == 0 else '.detach()'} + 0.1 * (x + self.s{max(i - 1, 0)})\n"
        for i in range(count))
    return (HEADER + "class Statistics(nn.Module):\n    def __init__(self):\n        super().__init__()\n" + init +
            "\n    def forward(self, x):\n" + steps + "        return x\n\n\n"
            "def train(model, loader, optimizer):\n    for batch in loader:\n        optimizer.zero_grad()\n"
            "        model(batch).sum().backward()\n        optimizer.step()\n")


def many_stores(lines: int) -> str:
    """One training loop that appends to thousands of lists, each emptied every N steps: what
    TML001 and TML004 ask of every container (is it reset in this loop? in another method?)."""
    count = max(1, (lines - 16) // 4)
    inits = "".join(f"    kept_{i} = []\n" for i in range(count))
    stores = "".join(f"        kept_{i}.append({'loss' if i % 8 == 0 else 'loss.item()'})\n"
                     f"        if step % 100 == 0:\n            kept_{i}.clear()\n" for i in range(count))
    return (HEADER + "def train(model, loader, optimizer):\n" + inits +
            "    for step, batch in enumerate(loader):\n        optimizer.zero_grad()\n"
            "        loss = model(batch).sum()\n        loss.backward()\n        optimizer.step()\n" + stores)


SHAPES: dict[str, Callable[[int], str]] = {
    "functions": small_functions, "huge_function": huge_function, "class": one_class, "nested": nested,
    "carried_state": carried_state, "many_stores": many_stores,
}


def _kept(loss: str, index: int) -> str:
    """What a chunk appends to the history: the loss itself (a TML001 finding, with a fix) in
    one chunk of eight, its value otherwise."""
    return loss if index % 8 == 0 else f"{loss}.item()"


def _count(chunks: list[str]) -> int:
    return sum(chunk.count("\n") for chunk in chunks)


def cpu_seconds(work: Callable[[], object], repeat: int) -> float:
    """The least CPU time of ``repeat`` runs, each under the garbage-collector settings of
    ``torchmemlint check`` (with the default ones, collections rescan the growing tree and
    make even LibCST's parse look superlinear)."""
    from torchmemlint.cli import _rare_garbage_collection

    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        with _rare_garbage_collection():
            started = time.process_time()
            work()
            best = min(best, time.process_time() - started)
    return best


def measure(shape: str, size: int, repeat: int, fix_edits: bool = True) -> tuple[int, float, float, int]:
    """Lines, check seconds, parse seconds and the number of findings of one generated file."""
    import libcst

    source = SHAPES[shape](size).encode()
    path = Path(f"{shape}_{size}.py")
    rules = all_rules()
    found: list = []
    check = cpu_seconds(lambda: found.append(lint(source, path, rules, fix_edits)), repeat)
    diagnostics, errors = found[-1]
    if errors:
        raise SystemExit(f"{path}: {errors[0].message}")
    parse = cpu_seconds(lambda: libcst.parse_module(source), repeat)
    return source.count(b"\n"), check, parse, len(diagnostics)


def each_rule_alone(shapes: list[str], repeat: int) -> float:
    """Each rule alone on a fresh semantic model, at 4k and 16k lines: a quadratic path that a
    full check hides (another rule asked the question first and its answer was memoised) shows
    here, as ``--select`` of that one rule would meet it. Prints each rule's growth over the 4x
    size (4.0 is linear) and returns the worst."""
    from torchmemlint import engine
    from torchmemlint.semantics import SemanticModel
    from torchmemlint.semantics.prescreen import scan

    worst = 0.0
    for shape in shapes:
        models = []
        for size in (4_000, 16_000):
            source = SHAPES[shape](size).encode()
            module, error = engine.parse(source, f"{shape}.py", scan(source, f"{shape}.py"))
            if module is None:
                raise SystemExit(f"{shape}_{size}.py: {error.message}")
            models.append(module)
        growths = []
        for rule in all_rules():
            small, large = (cpu_seconds(lambda: list(rule.check(SemanticModel(m, f"{shape}.py"))), repeat)
                            for m in models)
            growths.append((large / max(small, 1e-6), rule.code, small, large))
        growths.sort(reverse=True)
        worst = max(worst, growths[0][0])
        print(f"{shape:<14} " + ", ".join(f"{code} {g:.1f}x ({a:.2f} s -> {b:.2f} s)" for g, code, a, b in growths[:3]),
              flush=True)
    print(f"worst growth of one rule alone from 4k to 16k lines: {worst:.1f}x (4.0 is linear)")
    return worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-lines", type=int, default=SIZES[-1])
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated: " + ", ".join(SHAPES))
    parser.add_argument("--repeat", type=int, default=1, help="runs per measurement (the minimum is kept)")
    parser.add_argument("--profile", metavar="SHAPE:LINES", help="profile one check instead")
    parser.add_argument("--each-rule", action="store_true", help="time every rule alone instead")
    parser.add_argument("--without-fix-edits", action="store_true",
                        help="check as the text output does, which shows no fix's edits (json and sarif show them)")
    args = parser.parse_args()
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))  # LibCST's codegen on deep nesting
    if args.each_rule:
        each_rule_alone(args.shapes.split(","), args.repeat)
        return 0
    if args.profile:
        shape, _, size = args.profile.partition(":")
        source = SHAPES[shape](int(size)).encode()
        profiler = cProfile.Profile()
        from torchmemlint.cli import _rare_garbage_collection

        with _rare_garbage_collection():  # as measured (else collections land on whatever allocates)
            profiler.runcall(lint, source, Path(f"{shape}.py"), all_rules())
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
        return 0
    print(f"{'shape':<14} {'lines':>6} {'findings':>8} {'check s':>8} {'parse s':>8} {'check/parse':>11} "
          f"{'us/line':>8} {'parse us/line':>13} {'x per 2x':>8}")
    worst = 0.0
    for shape in args.shapes.split(","):
        previous = None
        per_line, parse_per_line, ratios = [], [], []
        for size in (s for s in SIZES if s <= args.max_lines):
            lines, check, parse, findings = measure(shape, size, args.repeat, not args.without_fix_edits)
            growth = f"{check / previous:.2f}" if previous else "-"
            previous = check
            per_line.append(check / lines)
            parse_per_line.append(parse / lines)
            ratios.append(check / parse)
            print(f"{shape:<14} {lines:>6} {findings:>8} {check:>8.2f} {parse:>8.2f} {check / parse:>11.2f} "
                  f"{1e6 * check / lines:>8.1f} {1e6 * parse / lines:>13.1f} {growth:>8}", flush=True)
        spread = max(per_line) / min(per_line)
        worst = max(worst, spread)
        print(f"{shape:<14} time per line, largest over smallest: check {spread:.2f}, LibCST's parse "
              f"{max(parse_per_line) / min(parse_per_line):.2f}; check/parse from {min(ratios):.2f} "
              f"to {max(ratios):.2f}", flush=True)
    print(f"worst check time-per-line spread over all shapes: {worst:.2f} (1.0 is linear)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
