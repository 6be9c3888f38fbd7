"""Which loops run training or evaluation steps, at which granularity.

A *step-running* loop calls a backward pass or an optimizer step somewhere in its body: state
carried across its iterations crosses a backward. A *batch* loop does one step's work itself
(a forward, a backward or an optimizer step outside any nested loop, or it iterates a loader);
an epoch loop around it, or a loop over models, is no batch loop."""
from __future__ import annotations

import re
from typing import Optional, Union

import libcst as cst

from torchmemlint.semantics.imports import ImportTable
from torchmemlint.semantics.scopes import Loop, Scopes, is_step_call, terminal_name
from torchmemlint.semantics.tree import Tree
from torchmemlint.semantics.values import Values, is_model_name

# An iterable that yields batches (also read by TML005's pre-screen predicate).
LOADER_ITERABLE = re.compile(r"loader|batches|dataset|\bdl\b|_dl\b", re.IGNORECASE)
Iteration = Union[Loop, "cst.FunctionDef"]  # a string: see scopes.Loop


class Iterations:
    def __init__(self, tree: Tree, imports: ImportTable, scopes: Scopes, values: Values) -> None:
        self.tree = tree
        self.imports = imports
        self.scopes = scopes
        self.values = values

    def step_calls(self, region: Iteration) -> list[cst.Call]:
        """Backward passes and optimizer steps in a loop body (or a method), outside nested
        functions."""
        calls = self.scopes.loop_body_nodes(region, cst.Call) if isinstance(region, (cst.For, cst.While)) \
            else self.scopes.scope_nodes(region, cst.Call)
        return [c for c in calls if self.values.backward_roots(c) or is_step_call(c)]

    def runs_step(self, loop: Loop) -> bool:
        return bool(self.step_calls(loop))

    def steps_optimizer(self, loop: Loop) -> bool:
        """Each iteration is (at least) one training step: the loop steps an optimizer — unlike
        a loop over one step's environments or heads, with the optimizer step after it."""
        return any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "step" for c in self.step_calls(loop))

    def differentiates_through_steps(self, region: Iteration) -> bool:
        """A backward that builds a graph of its own (``create_graph=True``): unrolled,
        differentiable optimization (meta-learning) where a graph spanning iterations is the
        point."""
        return any(keyword_is_true(c, "create_graph") for c in self.step_calls(region))

    @staticmethod
    def iterates_loader(loop: Loop) -> bool:
        return isinstance(loop, cst.For) and bool(LOADER_ITERABLE.search(cst.Module([]).code_for_node(loop.iter)))

    def is_batch_loop(self, loop: Loop) -> bool:
        if self.iterates_loader(loop):
            return True
        for call in self.scopes.loop_body_nodes(loop, cst.Call):
            loops = self.scopes.loops_around(call)
            if not loops or loops[0] is not loop:
                continue  # inside a nested loop (that one is the batch loop) or a lambda
            if self.values.backward_roots(call) or is_step_call(call) or self.runs_forward(call):
                return True
        return False

    def runs_forward(self, call: cst.Call) -> bool:
        """A forward pass: a model or loss call, or ``model.generate(...)``."""
        if self.values.is_module_call(call):
            return True
        func = call.func
        return isinstance(func, cst.Attribute) and func.attr.value == "generate" and \
            is_model_name(terminal_name(func.value))

    def batch_iteration(self, node: cst.CSTNode) -> Optional[Iteration]:
        """The innermost loop around ``node`` when it is a batch loop, else the per-step method
        ``node`` is in (when it is in no loop)."""
        loops = self.scopes.loops_around(node)
        if loops:
            return loops[0] if self.is_batch_loop(loops[0]) else None
        func = self.scopes.function_of(node)
        return func if func is not None and self.scopes.is_per_step_method(func) else None

    def runs_every_iteration(self, node: cst.CSTNode, iteration: Iteration) -> bool:
        """Not only under a condition — every few steps (``if step % 100 == 0:``), behind a
        configuration flag (``if args.empty_cache:``), on an error (an ``except`` handler) — except
        the capability check ``if torch.cuda.is_available():``, which holds on every step."""
        for ancestor in self.tree.ancestors(node):
            if ancestor is iteration:
                return True
            if isinstance(ancestor, cst.ExceptHandler):
                return False
            if isinstance(ancestor, (cst.If, cst.IfExp)) and not self._is_capability_check(ancestor.test):
                return False
        return True

    def _is_capability_check(self, test: cst.BaseExpression) -> bool:
        return isinstance(test, cst.Call) and (self.imports.qualify(test.func) or "").endswith(".is_available")

def keyword_is_true(call: cst.Call, keyword: str) -> bool:
    """``call`` passes ``keyword=True`` literally."""
    return any(
        a.keyword is not None and a.keyword.value == keyword and isinstance(a.value, cst.Name) and a.value.value == "True"
        for a in call.args
    )
