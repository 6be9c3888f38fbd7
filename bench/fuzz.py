"""Property checks of ``check`` and ``fix --unsafe-fixes`` on generated and mutated programs.

    python bench/fuzz.py --mutations 20000 --generated 2000 --seed 1
    python bench/fuzz.py --minutes 10            # as many as fit, half each kind

Programs come from two sources: mutations of the repository's fixtures (lines deleted,
duplicated or swapped; CR, CRLF or mixed line ends; backslash continuations; tabs for
indentation; a chain of operators grown in a line), and programs ``hypothesmith`` generates from
Python's grammar (when it is installed). For each program (``problems``):

- ``check`` never fails inside (no "internal error" line; it cannot raise);
- ``fix --unsafe-fixes`` never fails inside, its output parses whenever the input did, a second
  fix of its output changes nothing (idempotent), and a program without findings comes back
  byte for byte.

It prints the number of programs of each kind, the seed, and every problem (the program is
written to ``--out``). ``tests/test_fuzz.py`` runs a few of the same with a fixed seed.
"""
from __future__ import annotations

import argparse
import ast
import random
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS_FOLDERS = (REPO_ROOT / "fixtures", REPO_ROOT / "bench" / "corpus", REPO_ROOT / "bench" / "samples")


def corpus() -> list[bytes]:
    """The fixtures' Python files: real training code, each with findings and fixes."""
    return [path.read_bytes() for folder in CORPUS_FOLDERS for path in sorted(folder.rglob("*.py"))]


# -- mutations ---------------------------------------------------------------------------------

def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def delete_line(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    if lines:
        del lines[rng.randrange(len(lines))]
    return "".join(lines)


def duplicate_line(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    if lines:
        at = rng.randrange(len(lines))
        lines.insert(at, lines[at])
    return "".join(lines)


def swap_lines(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    if len(lines) > 1:
        at = rng.randrange(len(lines) - 1)
        lines[at], lines[at + 1] = lines[at + 1], lines[at]
    return "".join(lines)


def line_ends(text: str, rng: random.Random) -> str:
    lines = text.splitlines()
    ending = rng.choice(["\r", "\r\n", "mixed"])
    if ending != "mixed":
        return ending.join(lines) + ending
    return "".join(line + rng.choice(["\n", "\r\n", "\r"]) for line in lines)


def backslash(text: str, rng: random.Random) -> str:
    """A backslash continuation: a line split after a space, or a whitespace-only line ending in
    a backslash before it (what LibCST counts into the next line's indentation)."""
    lines = _lines(text)
    if not lines:
        return text
    at = rng.randrange(len(lines))
    line = lines[at]
    indent = line[:len(line) - len(line.lstrip())]
    if rng.random() < 0.5 and " " in line.strip():
        cut = line.index(" ", len(indent)) if " " in line[len(indent):] else len(line)
        lines[at] = line[:cut] + " \\\n" + indent + "    " + line[cut:].lstrip(" ")
    else:
        lines.insert(at, indent + "\\\n")
    return "".join(lines)


def tabs(text: str, rng: random.Random) -> str:
    """Leading groups of four spaces as tabs, in one line or in all of them."""
    lines = _lines(text)
    chosen = range(len(lines)) if rng.random() < 0.5 or not lines else [rng.randrange(len(lines))]
    for at in chosen:
        stripped = lines[at].lstrip(" ")
        depth = (len(lines[at]) - len(stripped)) // 4
        lines[at] = "\t" * depth + " " * ((len(lines[at]) - len(stripped)) % 4) + stripped
    return "".join(lines)


def grow_chain(text: str, rng: random.Random) -> str:
    """An expression statement's value chained with itself, up to hundreds of times."""
    lines = _lines(text)
    candidates = [i for i, line in enumerate(lines) if line.strip() and not line.rstrip().endswith((":", "\\", ","))
                  and "=" in line and not line.lstrip().startswith(("#", "@", "def ", "class ", "return", "import",
                                                                     "from"))]
    if not candidates:
        return text
    at = rng.choice(candidates)
    line = lines[at].rstrip("\r\n")
    ending = lines[at][len(line):]
    target, _, value = line.partition("=")
    count = rng.choice([10, 100, 400])
    operator = rng.choice([" + ", " and ", " or ", " < "])
    lines[at] = f"{target}= ({value.strip()})" + (operator + "x") * count + ending
    return "".join(lines)


MUTATIONS: tuple[Callable[[str, random.Random], str], ...] = (
    delete_line, duplicate_line, swap_lines, line_ends, backslash, tabs, grow_chain,
)


def mutate(source: bytes, rng: random.Random) -> bytes:
    """One to three mutations of a program's text (its encoding kept)."""
    text = source.decode("utf-8", errors="surrogateescape")
    for _ in range(rng.randint(1, 3)):
        text = rng.choice(MUTATIONS)(text, rng)
    return text.encode("utf-8", errors="surrogateescape")


def mutated_programs(count: int, seed: int) -> Iterator[bytes]:
    rng = random.Random(seed)
    sources = corpus()
    for _ in range(count):
        yield mutate(rng.choice(sources), rng)


# -- the properties ----------------------------------------------------------------------------

def _parses(source: bytes) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def problems(source: bytes, path: str = "fuzzed.py") -> list[str]:
    """What goes wrong with ``check`` and ``fix --unsafe-fixes`` on one program (empty: nothing)."""
    from torchmemlint.engine import check_source
    from torchmemlint.fix import fix_source
    from torchmemlint.rules import ALL_RULES

    found = []
    diagnostics, errors = check_source(source, path, ALL_RULES)
    found += [f"check: {e.message}" for e in errors if "internal error" in e.message]
    result = fix_source(source, path, ALL_RULES, unsafe=True)
    found += [f"fix: {e.message}" for e in result.errors if "internal error" in e.message]
    if result.source != source:
        if _parses(source) and not _parses(result.source):
            found.append("fix: the output does not parse")
        again = fix_source(result.source, path, ALL_RULES, unsafe=True)
        if again.source != result.source:
            found.append("fix: not idempotent (a second run changes the output)")
    elif result.applied:
        found.append("fix: fixes counted as applied but nothing changed")
    if not diagnostics and not errors and result.source != source:
        found.append("fix: a program without findings was changed")
    return found


def generated_programs(count: int, seed: int, batch: int = 50) -> Iterator[bytes]:
    """Programs ``hypothesmith`` draws from Python's grammar, reproducibly from ``seed``, drawn
    ``batch`` at a time (batch ``n`` with seed ``seed * 1_000_003 + n``), so that a consumer can
    stop between batches."""
    import hypothesmith
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hypothesis_seed

    for number in range((count + batch - 1) // batch):
        drawn: list[str] = []

        @hypothesis_seed(seed * 1_000_003 + number)
        @settings(max_examples=min(batch, count - number * batch), database=None, deadline=None,
                  suppress_health_check=list(HealthCheck))
        @given(hypothesmith.from_grammar())
        def collect(program: str) -> None:
            drawn.append(program)

        collect()
        for program in drawn:
            yield program.encode("utf-8", errors="surrogateescape")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutations", type=int, default=1000, help="mutated fixtures to run (default: 1000)")
    parser.add_argument("--generated", type=int, default=100, help="hypothesmith programs to run (default: 100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--minutes", type=float, help="stop after this long (the counts are upper bounds)")
    parser.add_argument("--out", type=Path, default=Path("fuzz-problems"), help="where failing programs go")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO_ROOT))
    started = time.monotonic()
    # With --minutes, the mutated programs get the first half, the generated ones the rest.
    deadlines = {"mutated": started + 30 * args.minutes, "generated": started + 60 * args.minutes} \
        if args.minutes else {}
    counts = {"mutated": 0, "generated": 0}
    failures = 0
    sources: list[tuple[str, Iterator[bytes]]] = [("mutated", mutated_programs(args.mutations, args.seed))]
    if args.generated:
        try:
            sources.append(("generated", generated_programs(args.generated, args.seed)))
        except ImportError:
            print("hypothesmith is not installed: no generated programs", file=sys.stderr)
    for kind, programs in sources:
        for program in programs:
            if kind in deadlines and time.monotonic() > deadlines[kind]:
                break
            counts[kind] += 1
            if counts[kind] % 500 == 0:
                print(f"... {counts[kind]} {kind} programs, {failures} with problems so far", file=sys.stderr, flush=True)
            found = problems(program)
            if found:
                failures += 1
                args.out.mkdir(exist_ok=True)
                name = args.out / f"{kind}_{args.seed}_{counts[kind]}.py"
                name.write_bytes(program)
                print(f"{name}: {'; '.join(found)}", flush=True)
    print(f"seed {args.seed}: {counts['mutated']} mutated and {counts['generated']} generated programs in "
          f"{time.monotonic() - started:.0f} s, {failures} with problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
