"""Run every rule over a folder of real training code (public repositories fetched outside this
repository, never committed) and write each finding with its source line to a listing for manual
judgement.

Usage: python bench/realcode.py [FOLDER] [--out LISTING]
Defaults: FOLDER /work/realcode, LISTING /tmp/torchmemlint-realcode-findings.txt (kept outside the
repository on purpose: it quotes code nobody on the team wrote).
"""
from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from lint import REPO_ROOT, all_rules, lint, python_files

DEFAULT_FOLDER = Path("/work/realcode")
DEFAULT_LISTING = Path("/tmp/torchmemlint-realcode-findings.txt")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--out", type=Path, default=DEFAULT_LISTING, help="where to write the findings listing")
    args = parser.parse_args()
    if not args.folder.is_dir():
        parser.error(f"no such folder: {args.folder}")
    if args.out.resolve().is_relative_to(REPO_ROOT):
        parser.error("the listing quotes third-party code: write it outside the repository")

    rules = all_rules()
    per_rule: Counter[str] = Counter()
    files_with_findings: Counter[str] = Counter()
    checked = 0
    listing, errors, paths_with_findings = [], [], set()
    for path in python_files(args.folder):
        source = path.read_bytes()
        checked += 1
        diagnostics, file_errors = lint(source, path, rules)
        errors += file_errors
        lines = source.decode("utf-8", errors="replace").splitlines()
        for code in {d.code for d in diagnostics}:
            files_with_findings[code] += 1
        if diagnostics:
            paths_with_findings.add(path)
        for d in diagnostics:
            per_rule[d.code] += 1
            text = lines[d.line - 1].strip() if d.line <= len(lines) else ""
            listing.append(f"{path.relative_to(args.folder)}:{d.line}:{d.column + 1}: {d.code} {d.message}\n"
                           f"    {text}")

    args.out.write_text("\n".join(listing) + ("\n" if listing else ""), encoding="utf-8")
    print(f"files checked: {checked} under {args.folder}")
    print(f"files not checked (file errors): {len({e.path for e in errors})}")
    print(f"findings: {sum(per_rule.values())} in {len(paths_with_findings)} files")
    for rule in rules:
        print(f"  {rule.code} {rule.name:40} {per_rule[rule.code]:4} findings in {files_with_findings[rule.code]:3} files")
    print(f"listing written to {args.out}")
    for error in errors:
        print(f"file error: {error.path}:{error.line}: {error.message}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
