"""The committed rule pages are exactly what docs/generate.py writes from the docstrings."""
from __future__ import annotations

import importlib.util
from pathlib import Path

GENERATOR = Path(__file__).resolve().parent.parent / "docs" / "generate.py"


def test_rule_pages_are_up_to_date() -> None:
    spec = importlib.util.spec_from_file_location("docs_generate", GENERATOR)
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    stale = [str(path) for path, text in generate.rule_pages().items()
             if not path.exists() or path.read_text(encoding="utf-8") != text]
    assert not stale, f"run `python docs/generate.py`; stale pages: {stale}"
