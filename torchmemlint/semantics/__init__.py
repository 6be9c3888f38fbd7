"""The semantic model of one module, computed once and shared by every rule.

Each part is built on first use, so a run that selects only cheap rules pays only for what
they ask."""
from __future__ import annotations

from functools import cached_property

import libcst as cst

from torchmemlint.semantics.autograd import AutogradFunctions
from torchmemlint.semantics.calls import Calls
from torchmemlint.semantics.datasets import Datasets
from torchmemlint.semantics.devices import Devices
from torchmemlint.semantics.flow import Flow
from torchmemlint.semantics.grad import GradContexts
from torchmemlint.semantics.hf import HFTrainers
from torchmemlint.semantics.hooks import Hooks
from torchmemlint.semantics.imports import ImportTable
from torchmemlint.semantics.iterations import Iterations
from torchmemlint.semantics.loop_carried import LoopCarried
from torchmemlint.semantics.modules import Modules
from torchmemlint.semantics.params import Parameters
from torchmemlint.semantics.scopes import Scopes
from torchmemlint.semantics.stores import Stores
from torchmemlint.semantics.tree import Tree


class SemanticModel:
    def __init__(self, module: cst.Module, path: str = "<string>") -> None:
        self.module = module
        self.path = path

    @cached_property
    def tree(self) -> Tree:
        return Tree(self.module)

    @cached_property
    def imports(self) -> ImportTable:
        return ImportTable(self.tree.nodes(cst.Import), self.tree.nodes(cst.ImportFrom))

    @cached_property
    def scopes(self) -> Scopes:
        return Scopes(self.tree, self.imports)

    @cached_property
    def calls(self) -> Calls:
        return Calls(self.tree, self.imports, self.scopes, self.modules)

    @cached_property
    def grad(self) -> GradContexts:
        return GradContexts(self.tree, self.imports, self.scopes, self.calls)

    @cached_property
    def flow(self) -> Flow:
        return Flow(self.tree, self.imports, self.scopes, self.grad, self.modules, self.calls)

    @cached_property
    def stores(self) -> Stores:
        return Stores(self.tree, self.imports, self.scopes, self.calls, self.flow, self.iterations)

    @cached_property
    def iterations(self) -> Iterations:
        return Iterations(self.tree, self.imports, self.scopes, self.calls)

    @cached_property
    def devices(self) -> Devices:
        return Devices(self.tree, self.imports, self.scopes, self.calls)

    @cached_property
    def datasets(self) -> Datasets:
        return Datasets(self.tree, self.imports, self.scopes, self.calls)

    @cached_property
    def loop_carried(self) -> LoopCarried:
        return LoopCarried(self.tree, self.imports, self.scopes, self.calls, self.grad, self.flow, self.stores,
                            self.iterations)

    @cached_property
    def hooks(self) -> Hooks:
        return Hooks(self.tree, self.imports, self.scopes, self.iterations)

    @cached_property
    def modules(self) -> Modules:
        return Modules(self.tree, self.imports, self.scopes)

    @cached_property
    def params(self) -> Parameters:
        return Parameters(self.tree, self.imports, self.scopes, self.modules, self.calls)

    @cached_property
    def autograd(self) -> AutogradFunctions:
        return AutogradFunctions(self.tree, self.imports, self.scopes, self.calls)

    @cached_property
    def hf(self) -> HFTrainers:
        return HFTrainers(self.tree, self.imports, self.scopes)

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)
