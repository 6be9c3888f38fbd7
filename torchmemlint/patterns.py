"""Path patterns with ``.gitignore`` semantics.

One syntax for everything that matches paths — ``exclude``/``extend-exclude``, the globs of
``per-file-ignores`` and ``.gitignore`` files — so users learn it once:

- ``*`` and ``?`` do not cross ``/``; ``[abc]``/``[!abc]`` are character classes; ``\\`` escapes;
- ``**`` as a whole segment matches any number of folders (``a/**/b``, ``**/x``, ``a/**``);
- a pattern with a ``/`` at its start or in its middle is anchored to the folder it is relative to
  (the configuration's folder, or the ``.gitignore``'s); without one it matches a name at any depth;
- a trailing ``/`` matches folders only; a leading ``!`` negates (``.gitignore`` only).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional


@dataclass(frozen=True)
class PathPattern:
    text: str
    regex: re.Pattern[str]
    anchored: bool
    directory_only: bool
    negated: bool = False

    @classmethod
    def compile(cls, text: str, allow_negation: bool = False) -> "PathPattern":
        """Compile one glob. Raises ``ValueError`` for an empty or malformed pattern."""
        pattern = text
        negated = False
        if allow_negation and pattern.startswith("!"):
            negated, pattern = True, pattern[1:]
        directory_only = pattern.endswith("/") and not pattern.endswith("\\/")
        pattern = pattern.rstrip("/") if directory_only else pattern
        anchored = "/" in pattern
        pattern = pattern.lstrip("/")
        if not pattern:
            raise ValueError(f"empty path pattern {text!r}")
        segments = pattern.split("/") if anchored else ["**", pattern]
        try:
            regex = re.compile(_segments_to_regex(segments))
        except re.error as error:  # e.g. a reversed range "[z-a]"
            raise ValueError(f"invalid path pattern {text!r}: {error}") from None
        return cls(text, regex, anchored, directory_only, negated)

    def matches(self, relative_path: str, is_dir: bool) -> bool:
        """``relative_path`` uses ``/`` and is relative to the folder the pattern belongs to."""
        if self.directory_only and not is_dir:
            return False
        return self.regex.fullmatch(relative_path) is not None

    def matches_path(self, path: Path, root: Path, is_dir: bool) -> bool:
        """Match an absolute path against a pattern relative to ``root``. Outside ``root`` only
        unanchored patterns can match, against the path's name."""
        return self.matches_relative(relative_posix(path, root), path.name, is_dir)

    def matches_relative(self, relative: Optional[str], name: str, is_dir: bool) -> bool:
        """``matches_path`` with the path already made relative (None: outside the root)."""
        if relative is None:
            return not self.anchored and self.matches(name, is_dir)
        return self.matches(relative, is_dir)


def relative_posix(path: Path, root: Path) -> Optional[str]:
    """``path.relative_to(root).as_posix()`` for absolute, normalised paths, or None when
    ``path`` is not inside ``root``; by string operations (pathlib's cost a hundredfold more,
    and discovery asks for every file and folder)."""
    text, prefix = str(path), str(root)
    if text == prefix:
        return "."
    if not prefix.endswith(os.sep):
        prefix += os.sep
    if not text.startswith(prefix):
        return None
    relative = text[len(prefix):]
    return relative.replace(os.sep, "/") if os.sep != "/" else relative


def parse_gitignore(text: str) -> list[PathPattern]:
    """The patterns of a ``.gitignore`` file, in order (the last match decides). Lines that are
    not valid patterns are skipped, as git does."""
    patterns = []
    for line in text.splitlines():
        line = _strip_unescaped_trailing_spaces(line)
        if not line or line.startswith("#"):
            continue
        try:
            if line.startswith(("\\#", "\\!")):
                patterns.append(PathPattern.compile(line[1:]))
            else:
                patterns.append(PathPattern.compile(line, allow_negation=True))
        except ValueError:
            continue
    return patterns


def last_match(patterns: list[PathPattern], relative_path: str, is_dir: bool) -> Optional[PathPattern]:
    for pattern in reversed(patterns):
        if pattern.matches(relative_path, is_dir):
            return pattern
    return None


def _strip_unescaped_trailing_spaces(line: str) -> str:
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        return stripped + " "
    return stripped


def _segments_to_regex(segments: list[str]) -> str:
    regex = ""
    last = len(segments) - 1
    for index, segment in enumerate(segments):
        if segment == "**":
            # Trailing "/**" matches everything inside; elsewhere "**/" is zero or more folders.
            regex += ".*" if index == last else "(?:[^/]*/)*"
        else:
            regex += _segment_to_regex(segment) + ("" if index == last else "/")
    return regex


def _segment_to_regex(segment: str) -> str:
    regex = ""
    position = 0
    while position < len(segment):
        char = segment[position]
        position += 1
        if char == "*":
            while position < len(segment) and segment[position] == "*":
                position += 1  # "a**b" is an ordinary star, as in git
            regex += "[^/]*"
        elif char == "?":
            regex += "[^/]"
        elif char == "\\" and position < len(segment):
            regex += re.escape(segment[position])
            position += 1
        elif char == "[":
            closing = _class_end(segment, position)
            if closing is None:
                regex += re.escape(char)
            else:
                body = segment[position:closing]
                if body.startswith("!"):
                    body = "^" + body[1:]
                regex += "[" + body.replace("\\", "\\\\") + "]"
                position = closing + 1
        else:
            regex += re.escape(char)
    return regex


def _class_end(segment: str, start: int) -> Optional[int]:
    """Index of the ``]`` closing a character class opened just before ``start``."""
    position = start
    if position < len(segment) and segment[position] in "!^":
        position += 1
    if position < len(segment) and segment[position] == "]":
        position += 1  # a "]" first in the class is a literal
    closing = segment.find("]", position)
    return closing if closing != -1 else None
