"""What every rule is: a code, a name, a message, docs, and a ``check`` over the semantic model."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Iterator, Optional, Sequence, Union

import libcst as cst

if TYPE_CHECKING:
    from torchmemlint.semantics import SemanticModel
    from torchmemlint.semantics.prescreen import FileFacts


@dataclass
class Replacement:
    """A fix expressed on the tree: ``old`` becomes ``new`` (a node, several statements, or nothing).

    The engine turns it into a text edit by regenerating the module, so indentation, comments
    and everything around it stay exactly as they were."""

    old: cst.CSTNode
    new: Union[cst.CSTNode, cst.FlattenSentinel, cst.RemovalSentinel]


@dataclass
class NodeFix:
    description: str
    safe: bool
    replacements: Sequence[Replacement]


@dataclass
class Finding:
    """What a rule reports: the node to point at, optionally its fix, the places that explain
    it (``related``: node and a few words, e.g. where the kept value was made) and the loop or
    per-step function it is about (``iteration``)."""

    node: cst.CSTNode
    message: Optional[str] = None
    fix: Optional[NodeFix] = None
    related: Sequence[tuple[cst.CSTNode, str]] = ()
    iteration: Optional[cst.CSTNode] = None
    no_fix: str = ""  # why ``fix`` is None, where the rule knows (``fix --diff`` shows it)


def explained(message: str, why: Sequence[tuple[cst.CSTNode, str]]) -> tuple[str, list[tuple[cst.CSTNode, str]]]:
    """``message`` with the path a kept value travelled (``Value.why``: where its graph was made,
    the returns, containers and attributes it went through), and those places as related
    locations; the message alone when the value did not travel."""
    if len(why) < 2:
        return message, list(why)
    return f"{message} ({'; '.join(words for _, words in why)})", list(why)


_ENCODED_TRIGGERS: dict[tuple[str, ...], tuple[bytes, ...]] = {}


class Rule:
    """Subclasses set the class attributes and implement ``check``; the docstring is the rule's
    documentation (ruff's shape), shown by ``torchmemlint explain``."""

    code: ClassVar[str]
    name: ClassVar[str]
    message: ClassVar[str]
    default_enabled: ClassVar[bool] = True
    # Words one of which must appear in a file's text for the rule to possibly match there.
    triggers: ClassVar[tuple[str, ...]] = ()
    # What else the rule cannot match without (the pre-screen's facts): something that may run
    # once per training step (``FileFacts.steps``), and one of these kinds of places where values
    # are kept (``FileFacts.keeps``); with both, such a place that may itself be in a step
    # iteration (``FileFacts.kept_per_step``).
    needs_steps: ClassVar[bool] = False
    keeping: ClassVar[frozenset[str]] = frozenset()

    def check(self, model: "SemanticModel") -> Iterator[Finding]:
        raise NotImplementedError

    def triggered(self, source: bytes) -> bool:
        """Whether one of ``triggers`` is in the file's text (always, without triggers)."""
        encoded = _ENCODED_TRIGGERS.get(self.triggers)
        if encoded is None:
            encoded = _ENCODED_TRIGGERS[self.triggers] = tuple(trigger.encode() for trigger in self.triggers)
        return not encoded or any(map(source.__contains__, encoded))  # (no generator frame per trigger)

    def could_match(self, facts: "FileFacts") -> bool:
        """Whether ``check`` could report anything in a file with these pre-screen facts. It
        must never say no where ``check`` finds something (a test compares every fixture and
        the installed torch package with and without the pre-screen); the default is the text
        test of ``triggers``, ``needs_steps`` and ``keeping``. A rule that narrows it keeps
        ``super().could_match(facts) and``."""
        if not self.triggered(facts.source):
            return False
        if not self.keeping:
            return facts.steps or not self.needs_steps
        if self.keeping.isdisjoint(facts.keeps):
            return False
        return not self.needs_steps or facts.kept_per_step(self.keeping)
