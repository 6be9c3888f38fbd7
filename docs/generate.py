"""Write docs/rules/<CODE>.md for every rule in ALL_RULES from its module docstring, and the
index docs/rules/README.md. Run ``python docs/generate.py``; tests/test_docs.py fails when the
committed pages are not what this script writes."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RULES_DIR = ROOT / "docs" / "rules"


def rule_pages() -> dict[Path, str]:
    sys.path.insert(0, str(ROOT))
    from torchmemlint.report.base import FILE_ERROR_DOCS, FILE_ERROR_MESSAGE, FILE_ERROR_NAME
    from torchmemlint.rules import ALL_RULES

    pages: dict[Path, str] = {}
    index = ["# Rules", "", "| code | name | on by default | message |", "|---|---|---|---|"]
    # Not a rule: a file that could not be checked. Documented like one, so that it can be
    # looked up (`torchmemlint explain TML000`, SARIF's helpUri) and ignored by its code.
    body = FILE_ERROR_DOCS.split("\n", 1)[1].strip()
    pages[RULES_DIR / "TML000.md"] = (
        f"# TML000 {FILE_ERROR_NAME}\n\nMessage: {FILE_ERROR_MESSAGE} (and why)\n\n"
        f"On by default: always\n\n{body}\n")
    index.append(f"| [TML000](TML000.md) | {FILE_ERROR_NAME} | always | {FILE_ERROR_MESSAGE} |")
    for rule in ALL_RULES:
        docstring = sys.modules[type(rule).__module__].__doc__ or ""
        body = docstring.split("\n", 1)[1].strip() if "\n" in docstring else ""
        default = "yes" if rule.default_enabled else "no"
        pages[RULES_DIR / f"{rule.code}.md"] = (
            f"# {rule.code} {rule.name}\n\n"
            f"Message: {rule.message}\n\n"
            f"On by default: {default}\n\n"
            f"{body}\n"
        )
        index.append(f"| [{rule.code}]({rule.code}.md) | {rule.name} | {default} | {rule.message} |")
    pages[RULES_DIR / "README.md"] = "\n".join(index) + "\n"
    return pages


def main() -> None:
    RULES_DIR.mkdir(parents=True, exist_ok=True)
    for path, text in rule_pages().items():
        path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
