"""Which training framework a script needs, read from its text (no import of the framework):
whether it is installed where ``verify`` runs, and whether a finding's function belongs to one
of its classes (a ``LightningModule``, a ``Trainer`` subclass, a callback).

A script that imports a framework that is not installed cannot be replayed: the verdict says
so (``framework-not-installed``) instead of replaying a ``ModuleNotFoundError``. A finding in a
framework class whose script never starts the framework is not reached by the replay; the
explanation then says what the replay needs (``drive`` runs a trainer the script starts).
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

# Top-level packages the replay knows how to drive or that such scripts need, and what to install.
FRAMEWORKS = {
    "lightning": "lightning",
    "pytorch_lightning": "pytorch-lightning",
    "transformers": "transformers",
    "accelerate": "accelerate",
}
# What a script starts each framework's training with, for the explanation.
_STARTS = {
    "lightning": "`Trainer(...).fit(model, loader)`",
    "pytorch_lightning": "`Trainer(...).fit(model, loader)`",
    "transformers": "`Trainer(...).train()`",
    "accelerate": "a training loop that calls it",
}


@dataclass(frozen=True)
class FrameworkClass:
    """A class of the script that derives from a framework's class."""

    name: str  # the script's class
    base: str  # the base as written (``L.LightningModule``)
    framework: str  # the top-level package (``lightning``)

    def hint(self) -> str:
        return (f"`{self.name}` is a `{self.base}` ({self.framework}): its methods run only when the script starts "
                f"the framework, e.g. with {_STARTS[self.framework]} in its `if __name__ == \"__main__\":` block; "
                "verify then runs it for a few steps (it limits the steps, the evaluation batches, and turns "
                "loggers and checkpoints off itself)")


def installed(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


class _Reader(cst.CSTVisitor):
    """The framework packages the script imports unconditionally (an import inside ``try`` is
    optional), the names those imports bind, and each class with its bases and lines."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.imported: list[str] = []
        self.bound: dict[str, str] = {}  # local name -> framework package
        self.classes: list[tuple[str, list[str], int, int]] = []
        self._tries = 0

    def visit_Try(self, node: cst.Try) -> None:
        self._tries += 1

    def leave_Try(self, original_node: cst.Try) -> None:
        self._tries -= 1

    def _note(self, package: str, local: str) -> None:
        if package not in FRAMEWORKS:
            return
        self.bound[local] = package
        if not self._tries and package not in self.imported:
            self.imported.append(package)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            dotted = _dotted(alias.name)
            local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else \
                dotted.split(".")[0]
            self._note(dotted.split(".")[0], local)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None:
            return
        package = _dotted(node.module).split(".")[0]
        if isinstance(node.names, cst.ImportStar):
            self._note(package, "")  # needs the package; binds no name a base could be read by
            return
        for alias in node.names:
            local = alias.asname.name if alias.asname else alias.name
            if isinstance(local, cst.Name):
                self._note(package, local.value)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        where = self.get_metadata(PositionProvider, node)
        self.classes.append((node.name.value, [_dotted(arg.value) for arg in node.bases],
                             where.start.line, where.end.line))


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def _read(text: str) -> Optional[_Reader]:
    reader = _Reader()
    try:
        MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True).visit(reader)
    except cst.ParserSyntaxError:
        return None
    return reader


def missing_framework(text: str) -> Optional[str]:
    """The first framework package the script imports unconditionally that is not installed."""
    reader = _read(text)
    if reader is None:
        return None
    return next((package for package in reader.imported if not installed(package)), None)


def framework_class(text: str, line: int) -> Optional[FrameworkClass]:
    """The innermost class around ``line`` that derives from a framework's class, if any."""
    reader = _read(text)
    if reader is None:
        return None
    around = [entry for entry in reader.classes if entry[2] <= line <= entry[3]]
    for name, bases, _, _ in reversed(around):
        for base in bases:
            package = reader.bound.get(base.split(".")[0])
            if package is not None:
                return FrameworkClass(name, base, package)
    return None
