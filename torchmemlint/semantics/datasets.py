"""Code that DataLoader worker processes run: Dataset classes and collate functions.

A *Dataset class* subclasses ``torch.utils.data.Dataset`` / ``IterableDataset`` or PyTorch
Geometric's ``Dataset`` (through the imports, or through other classes of the file), or defines
``__getitem__`` and ``__len__`` and is handed to a ``DataLoader`` in this file. A *collate
function* is passed as ``collate_fn=`` (a function, a ``functools.partial`` of one, a method, a
lambda, or an instance of a class with ``__call__``) or is named ``collate*``. *Worker code* is a
Dataset's ``__getitem__`` / ``__getitems__`` / ``__iter__``, a collate function, and the methods of
the same class they call."""
from __future__ import annotations

from functools import cached_property
from typing import Iterator, Optional, Union

import libcst as cst

from torchmemlint.semantics.calls import Calls
from torchmemlint.semantics.imports import ImportTable, dotted_name
from torchmemlint.semantics.scopes import Scopes
from torchmemlint.semantics.tree import Tree

# PyTorch Geometric's loaders and datasets subclass torch's, and fork the same workers.
DATALOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader", "DataLoader",
                         "torch_geometric.loader.DataLoader", "torch_geometric.data.DataLoader"})
GEOMETRIC_DATASETS = frozenset({"torch_geometric.data.Dataset", "torch_geometric.data.dataset.Dataset"})
WORKER_METHODS = ("__getitem__", "__getitems__", "__iter__")
UNRESOLVED_DATASET_BASES = frozenset({"Dataset", "IterableDataset", "data.Dataset", "data.IterableDataset"})
WorkerFunction = Union["cst.FunctionDef", "cst.Lambda"]  # strings: see scopes.Loop


class Datasets:
    def __init__(self, tree: Tree, imports: ImportTable, scopes: Scopes, calls: Calls) -> None:
        self.tree = tree
        self.imports = imports
        self.scopes = scopes
        self.calls = calls

    @cached_property
    def loader_calls(self) -> list[cst.Call]:
        return [c for c in self.tree.nodes(cst.Call)
                if (self.imports.qualify(c.func) or dotted_name(c.func)) in DATALOADERS]

    def is_dataset_class(self, cls: cst.ClassDef, depth: int = 0) -> bool:
        for base in self.scopes.class_bases(cls):
            if base in UNRESOLVED_DATASET_BASES:
                return True
            if base.startswith("torch.utils.data.") and base.endswith("Dataset") or base in GEOMETRIC_DATASETS:
                return True
            local = self.scopes.classes_by_name.get(base)
            if local is not None and local is not cls and depth < 4 and self.is_dataset_class(local, depth + 1):
                return True  # (a subclass of the file's own dataset class)
        return all(self.calls.method_of(cls, name) is not None for name in ("__getitem__", "__len__")) and \
            bool(self._loaders_of_class(cls))

    @cached_property
    def worker_functions(self) -> dict[WorkerFunction, str]:
        """Each function worker processes run, with what it is (``Dataset.__getitem__``,
        ``collate function``)."""
        found: dict[WorkerFunction, str] = {}
        for cls in self.tree.nodes(cst.ClassDef):
            if not self.is_dataset_class(cls):
                continue
            for name in WORKER_METHODS:  # (its own or inherited: what ``self.hook()`` runs depends on the class)
                if (method := self.calls.method_of(cls, name)) is not None:
                    self._add_with_callees(found, cls, method, f"{cls.name.value}.{name}")
        for function in self._collate_functions():
            if function not in found:
                cls = self.scopes.class_of(function) if isinstance(function, cst.FunctionDef) else None
                if cls is not None:
                    self._add_with_callees(found, cls, function, "a collate function")
                else:
                    found[function] = "a collate function"
        return found

    def runs_in_main_process(self, function: WorkerFunction) -> bool:
        """Every DataLoader of this file that uses ``function`` (through its Dataset class or as
        its collate function) has ``num_workers`` 0 or unset, and there is at least one."""
        loaders = self._loaders_using(function)
        return bool(loaders) and all(_without_workers(call) for call in loaders)

    # -- helpers ----------------------------------------------------------------------
    def _methods(self, cls: cst.ClassDef) -> list[cst.FunctionDef]:
        return [f for f in self.tree.descendants(cls, cst.FunctionDef) if self.scopes.class_of(f) is cls]

    def _add_with_callees(self, found: dict, cls: cst.ClassDef, method: cst.FunctionDef, role: str) -> None:
        """``method`` and what it calls, transitively: the methods of its class (``self.m(...)``,
        its own or a base class's of the file: a base's ``pull_item`` calling the hook this class
        overrides), the file's functions (``decode(path)``), and the ``__call__`` of an object of
        the file that the class was given when built (``self.transform(img)`` with
        ``FrameDataset(paths, transform=GpuResize(224))``)."""
        pending, seen = [method], set()
        while pending:
            current = pending.pop()
            if current in seen:
                continue
            seen.add(current)
            found.setdefault(current, role)
            for call in self.scopes.scope_nodes(current, cst.Call):
                func = call.func
                if isinstance(func, cst.Attribute) and dotted_name(func.value) == "self":
                    if (own := self.calls.method_of(cls, func.attr.value)) is not None:
                        pending.append(own)
                    else:
                        pending.extend(self._given_callables(cls, func.attr.value))
                elif isinstance(func, cst.Name) and (callee := self.calls.callee(call)) is not None and \
                        isinstance(callee.function, cst.FunctionDef) and self.scopes.class_of(callee.function) is None:
                    pending.append(callee.function)

    def _given_callables(self, cls: cst.ClassDef, attribute: str) -> list[cst.FunctionDef]:
        """The ``__call__`` methods of the file's classes whose objects the constructions of
        ``cls`` pass for the ``__init__`` parameter stored as ``self.<attribute>``."""
        init = self.calls.method_of(cls, "__init__")
        if init is None:
            return []
        param = self.scopes.stored_parameters(init).get(attribute)
        if param is None:
            return []
        found = []
        for site in self.calls.constructions(cls):
            callee = self.calls.callee(site)
            for argument, _ in self.calls.arguments(site, callee).get(param, ()) if callee is not None else ():
                given = self.scopes.classes_by_name.get(dotted_name(argument.func) or "") \
                    if isinstance(argument, cst.Call) else None
                call_method = self.calls.method_of(given, "__call__") if given is not None else None
                if call_method is not None:
                    found.append(call_method)
        return found

    def _collate_functions(self) -> Iterator[WorkerFunction]:
        for func in self.tree.nodes(cst.FunctionDef):
            name = func.name.value.lower()
            if "collate" in name and not name.startswith("test"):  # (``test_pad_collate``: a test *of* one)
                yield func
        for call in self.loader_calls:
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value == "collate_fn":
                    yield from self._functions_of(arg.value)
        for cls in self.tree.nodes(cst.ClassDef):
            if "collat" in cls.name.value.lower():
                yield from (m for m in self._methods(cls) if m.name.value == "__call__")

    def _functions_of(self, expr: cst.BaseExpression) -> Iterator[WorkerFunction]:
        """The functions a ``collate_fn=`` value runs."""
        if isinstance(expr, cst.Lambda):
            yield expr
            return
        if isinstance(expr, cst.Call):
            qualified = self.imports.qualify(expr.func) or dotted_name(expr.func) or ""
            if qualified in ("functools.partial", "partial") and expr.args:
                yield from self._functions_of(expr.args[0].value)
                return
            cls = self.scopes.classes_by_name.get(dotted_name(expr.func) or "")
            if cls is not None:
                yield from (m for m in self._methods(cls) if m.name.value == "__call__")
            return
        name = expr.attr.value if isinstance(expr, cst.Attribute) else (
            expr.value if isinstance(expr, cst.Name) else None)
        if name is not None:
            yield from self.scopes.functions_by_name.get(name, [])

    def _loaders_of_class(self, cls: cst.ClassDef) -> list[cst.Call]:
        """DataLoader calls whose dataset is an instance of ``cls`` (built inline or bound to a
        name first)."""
        name = cls.name.value
        loaders = []
        for call in self.loader_calls:
            dataset = self._dataset_argument(call)
            if dataset is None:
                continue
            if isinstance(dataset, cst.Call) and dotted_name(dataset.func) == name:
                loaders.append(call)
            elif isinstance(dataset, cst.Name) and any(
                isinstance(b.value, cst.Call) and dotted_name(b.value.func) == name
                for b in self.scopes.reaching_bindings(dataset.value, call)
            ):
                loaders.append(call)
        return loaders

    def _loaders_using(self, function: WorkerFunction) -> list[cst.Call]:
        if isinstance(function, cst.FunctionDef):
            cls = self.scopes.class_of(function)
            if cls is not None and self.is_dataset_class(cls):
                return self._loaders_of_class(cls)
        loaders = []
        for call in self.loader_calls:
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value == "collate_fn" and \
                        function in set(self._functions_of(arg.value)):
                    loaders.append(call)
        return loaders

    @staticmethod
    def _dataset_argument(call: cst.Call) -> Optional[cst.BaseExpression]:
        for i, arg in enumerate(call.args):
            if (arg.keyword is None and i == 0) or (arg.keyword is not None and arg.keyword.value == "dataset"):
                return arg.value
        return None


def _without_workers(call: cst.Call) -> bool:
    for arg in call.args:
        if arg.star:
            return False  # ``**loader_kwargs`` may set num_workers
        if arg.keyword is not None and arg.keyword.value == "num_workers":
            return isinstance(arg.value, cst.Integer) and arg.value.evaluated_value == 0
    return True
