"""Who keeps the growth alive: a walk from the script's names to the surviving storages.

Runs inside the replay child, after the last iteration, over the storages that were created in
a measured iteration and are still alive two or more iterations later (*survivors*). From each
script-level name (module globals, then the locals of the frames the replay stopped in) the walk
follows containers, object attributes, closures and autograd graphs (``grad_fn`` →
``next_functions`` and the tensors a node saved for backward) and credits each survivor to the
first name that reaches it.
"""
from __future__ import annotations

import collections
import types
import warnings
from typing import Any, Iterator

import torch

# Enough for the containers and graphs of a real training script; bounds the time spent on
# a script whose globals reach a huge object graph.
MAX_VISITS = 200_000
_NOT_WALKED = (types.ModuleType, type, str, bytes, int, float, complex, bool, type(None),
               types.BuiltinFunctionType, types.CodeType, types.FrameType)


def _storage_key(tensor: torch.Tensor) -> Any:
    try:
        return tensor.untyped_storage()._cdata
    except (RuntimeError, NotImplementedError):
        return None


def _children(obj: Any, path: str) -> Iterator[tuple[Any, str]]:
    """What ``obj`` references, each with a readable path."""
    if isinstance(obj, torch.Tensor):
        if obj.grad is not None:
            yield obj.grad, f"{path}.grad"
        if obj.grad_fn is not None:
            yield obj.grad_fn, f"{path}.grad_fn"
        return
    if isinstance(obj, torch.autograd.graph.Node):
        yield from _graph_node_children(obj, path)
        return
    if isinstance(obj, dict):
        for key, value in list(obj.items()):
            yield value, f"{path}[{key!r}]"
        return
    if isinstance(obj, (list, tuple, collections.deque)):
        for position, value in enumerate(list(obj)):
            yield value, f"{path}[{position}]"
        return
    if isinstance(obj, (set, frozenset)):
        for value in list(obj):
            yield value, f"{path}{{...}}"
        return
    if isinstance(obj, types.FunctionType):
        for name, cell in zip(obj.__code__.co_freevars, obj.__closure__ or ()):
            try:
                yield cell.cell_contents, f"{path}.<closure {name}>"
            except ValueError:  # empty cell
                pass
        names = obj.__code__.co_varnames[:obj.__code__.co_argcount]
        for name, default in zip(names[len(names) - len(obj.__defaults__ or ()):], obj.__defaults__ or ()):
            yield default, f"{path}.<default {name}>"
        for name, default in (obj.__kwdefaults__ or {}).items():
            yield default, f"{path}.<default {name}>"
        return
    if isinstance(obj, types.MethodType):
        yield obj.__self__, f"{path}.__self__"
        return
    attributes = getattr(obj, "__dict__", None)
    if isinstance(attributes, dict):
        for name, value in list(attributes.items()):
            yield value, f"{path}.{name}"


def _graph_node_children(node: Any, path: str) -> Iterator[tuple[Any, str]]:
    """An autograd node's inputs (``next_functions``) and saved tensors; a freed saved tensor
    (after ``backward()``) raises, and holds nothing."""
    for name in dir(node):
        if name.startswith("_saved_") or name == "variable":
            try:
                value = getattr(node, name)
            except RuntimeError:
                continue
            yield value, f"{path}.{name}"
    for position, (function, _) in enumerate(getattr(node, "next_functions", ())):
        if function is not None:
            yield function, f"{path}.next_functions[{position}]"


def credit_survivors(roots: list[tuple[str, Any]], survivors: dict[Any, int]) -> list[dict]:
    """For each root that reaches survivors: its name, how many and how many bytes it keeps,
    and the path to one of them. ``survivors`` maps storage keys to byte counts. Roots are
    walked in order, each survivor credited once."""
    with warnings.catch_warnings():  # reading ``.grad`` of a non-leaf warns
        warnings.simplefilter("ignore")
        return _credit(roots, survivors)


def _credit(roots: list[tuple[str, Any]], survivors: dict[Any, int]) -> list[dict]:
    unclaimed = dict(survivors)
    # Objects made on the fly (a saved tensor unpacked from a graph node) are kept referenced
    # here, so that their ids are not reused while the walk runs.
    seen: dict[int, Any] = {}
    visits = 0
    credited = []
    for root_name, root in roots:
        storages = nbytes = 0
        example = ""
        queue = collections.deque([(root, root_name)])
        while queue and unclaimed and visits < MAX_VISITS:
            obj, path = queue.popleft()
            if isinstance(obj, _NOT_WALKED) or id(obj) in seen:
                continue
            seen[id(obj)] = obj
            visits += 1
            if isinstance(obj, torch.Tensor):
                size = unclaimed.pop(_storage_key(obj), None)
                if size is not None:
                    storages += 1
                    nbytes += size
                    example = example or path
            try:
                queue.extend(_children(obj, path))
            except Exception:  # an object whose attributes or items cannot be read: nothing to follow
                continue
        if storages:
            credited.append({"name": root_name, "storages": storages, "bytes": nbytes, "example": example})
    return credited
