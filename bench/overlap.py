"""Which labelled bench files repeat the code of the rule fixtures.

The rules are tuned on ``fixtures/``; a bench case that shares a loop with a fixture measures them
on what they were tuned on. Every ``for``/``while`` loop of every file is normalised (comments,
docstrings and string constants dropped, every local name replaced by one placeholder, attribute,
keyword and module names kept) and its statements are compared line by line with those of every
fixture loop: identical normalised loops are copies; loops whose statement sequences match above
``--threshold`` (difflib ratio over lines, so an inserted or renamed line costs one line) with at
least ``--min-lines`` matching lines, ``--distinctive`` of them distinctive, are near-copies. A line
is distinctive when it occurs in at most 5 % of the fixture loops: ``v.zero_grad()``,
``v.backward()`` and ``v.step()`` match every training loop and prove nothing.

Usage: python bench/overlap.py [BENCH_DIR ...] [--against DIR] [--threshold 0.75] [--min-lines 5] [--distinctive 2]
Exit status 1 when an overlap is found, 0 otherwise.
"""
from __future__ import annotations

import argparse
import ast
import difflib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from lint import REPO_ROOT, python_files

FIXTURES = REPO_ROOT / "fixtures"
DEFAULT_BENCH = [REPO_ROOT / "bench" / "corpus", REPO_ROOT / "bench" / "reports"]


@dataclass(frozen=True)
class Loop:
    path: Path
    first_line: int
    last_line: int
    lines: tuple[str, ...]  # the normalised loop, one statement line each


MODULE_NAMES = {"torch", "nn", "F", "np", "optim"}


class _Normaliser(ast.NodeTransformer):
    """Replaces local names by one placeholder and blanks string constants, so that a copy with
    other variable names or other messages still compares equal, line by line."""

    def visit_Name(self, node: ast.Name) -> ast.AST:
        # Module names are kept: they say what the code calls.
        if node.id in MODULE_NAMES:
            return node
        return ast.copy_location(ast.Name(id="v", ctx=node.ctx), node)

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = "v"
        node.annotation = None
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, str):
            return ast.copy_location(ast.Constant(value=""), node)
        return node


def loops_of(path: Path, min_lines: int) -> list[Loop]:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            continue
        normalised = ast.unparse(_Normaliser().visit(ast.parse(ast.unparse(node))))
        lines = tuple(line.strip() for line in normalised.splitlines())
        if len(lines) >= min_lines:
            found.append(Loop(path, node.lineno, node.end_lineno, lines))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench", nargs="*", type=lambda p: Path(p).resolve(), help="folders of bench cases (default: bench/corpus, bench/reports)")
    parser.add_argument("--against", type=Path, default=FIXTURES,
                        help="the code the bench must not repeat (default: fixtures/)")
    parser.add_argument("--threshold", type=float, default=0.75,
                        help="line-sequence similarity from which a loop is a near-copy")
    parser.add_argument("--min-lines", type=int, default=5,
                        help="matching statement lines a near-copy needs (shorter loops are ignored)")
    parser.add_argument("--distinctive", type=int, default=2,
                        help="matching lines a near-copy needs that are not common to many fixture loops")
    args = parser.parse_args()
    fixture_loops = [loop for path in python_files(args.against) for loop in loops_of(path, args.min_lines)]
    loops_with_line = Counter(line for loop in fixture_loops for line in set(loop.lines))
    common = {line for line, count in loops_with_line.items() if count > 0.05 * len(fixture_loops)}
    # A near-copy shares at least one distinctive line with its fixture loop, so only the fixture
    # loops holding one of the bench loop's distinctive lines are compared; each keeps one matcher
    # (difflib indexes its second sequence once, not once per pair).
    holding: dict[str, list[int]] = {}
    for number, loop in enumerate(fixture_loops):
        for line in set(loop.lines) - common:
            holding.setdefault(line, []).append(number)
    matchers: dict[int, difflib.SequenceMatcher] = {}
    overlaps = 0
    for root in args.bench or DEFAULT_BENCH:
        for path in python_files(root):
            for loop in loops_of(path, args.min_lines):
                best, best_ratio = None, 0.0
                candidates = sorted({n for line in set(loop.lines) - common for n in holding.get(line, ())}) \
                    if args.distinctive > 0 else range(len(fixture_loops))
                for number in candidates:
                    other = fixture_loops[number]
                    matcher = matchers.get(number)
                    if matcher is None:
                        matcher = matchers[number] = difflib.SequenceMatcher(None, (), other.lines, autojunk=False)
                    matcher.set_seq1(loop.lines)
                    if matcher.real_quick_ratio() < max(args.threshold, best_ratio):
                        continue
                    ratio = matcher.ratio()
                    matched = [line for block in matcher.get_matching_blocks()
                               for line in loop.lines[block.a:block.a + block.size]]
                    distinctive = sum(line not in common for line in matched)
                    if ratio > best_ratio and len(matched) >= args.min_lines and distinctive >= args.distinctive:
                        best, best_ratio = other, ratio
                if best is None or best_ratio < args.threshold:
                    continue
                overlaps += 1
                kind = "copy" if best_ratio == 1.0 else f"near-copy {best_ratio:.2f}"
                print(f"{loop.path.relative_to(REPO_ROOT)}:{loop.first_line}-{loop.last_line}: {kind} of "
                      f"{best.path.relative_to(REPO_ROOT)}:{best.first_line}-{best.last_line}")
    print(f"{overlaps} overlapping loop(s)")
    return 1 if overlaps else 0


if __name__ == "__main__":
    raise SystemExit(main())
