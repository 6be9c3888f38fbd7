"""Parse every given file with LibCST's ``parse_module`` and nothing else: the cost floor of any
LibCST-based linter. Exit status 1 when a file does not parse (named on stderr)."""
from __future__ import annotations

import sys

import libcst

from filesets import files_from_argv


def main() -> int:
    files = files_from_argv(sys.argv[1:])
    failures = 0
    for path in files:
        try:
            libcst.parse_module(path.read_bytes())
        except (libcst.ParserSyntaxError, UnicodeDecodeError, OSError) as error:
            failures += 1
            print(f"{path}: {type(error).__name__}: {str(error).splitlines()[0]}", file=sys.stderr)
    print(f"libcst.parse_module: {len(files)} files, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
