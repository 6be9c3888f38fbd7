"""TML012 cached-tensor-function.

## What it does
Flags `functools.lru_cache` / `functools.cache` on a function or method that returns tensors
(annotated `-> torch.Tensor`, or returning a `torch` computation or a model call), takes tensors
(a parameter annotated `torch.Tensor`), takes a module (a parameter annotated `nn.Module`, named
like a model, or passed a module by the file), or is a method of an `nn.Module` subclass.

## Why is this bad?
The cache holds strong references to every argument and every result it keeps: cached tensors
are never freed (with `@cache` / `maxsize=None` there is no bound at all; with the default
`maxsize=128`, up to 128 results stay alive). Tensors hash by identity, so a tensor argument
misses the cache on every call and each miss pins one more input *and* its output — including
the autograd graph behind it when grad is enabled. On a method, `self` is part of every key:
the module, its parameters and its buffers are never garbage collected, even after the model is
deleted.

## Example
```python
@functools.lru_cache(maxsize=None)
def positional_encoding(length: int, dim: int) -> torch.Tensor:
    return torch.randn(length, dim, device="cuda")


class Encoder(nn.Module):
    @functools.lru_cache()
    def embed(self, tokens):
        return self.embedding(tokens)
```

## Use instead
```python
class Encoder(nn.Module):
    def __init__(self, max_len, dim):
        super().__init__()
        self.register_buffer("pos", torch.randn(max_len, dim), persistent=False)
```
Cache per instance (a buffer or an attribute computed once, `functools.cached_property`) so the
tensors die with their owner, or key the cache on plain values (shapes, dtypes) and keep it small.
Caches of plain Python values (a tokenizer, a config, a list of file names) stay silent.

## Fix safety
No fix. Removing the decorator changes how often the function runs and whether callers get the
same tensor object back (code may mutate the cached tensor in place, or compare identities); the
right replacement — a buffer on the module, a bounded cache keyed on shapes, a per-instance
attribute — depends on how the function is used.

## Runtime signature
Live memory grows with each distinct argument until the cache is full (never, for `@cache`);
the cached module stays alive after `del model`.
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from torchmemlint.rules.base import Finding, Rule
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.prescreen import FileFacts

_CACHING_DECORATORS = frozenset({"functools.lru_cache", "functools.cache"})


class CachedTensorFunction(Rule):
    code = "TML012"
    name = "cached-tensor-function"
    message = "lru_cache/cache keeps every tensor it returns or receives alive for the life of the process"
    triggers = ("cache",)

    def could_match(self, facts: FileFacts) -> bool:
        # A function that may take or return tensors, decorated with an imported caching decorator.
        return super().could_match(facts) and any(
            facts.qualify(d) in _CACHING_DECORATORS for d in facts.tensor_function_decorators)

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        for func in model.tree.nodes(cst.FunctionDef):
            decorator = self._caching_decorator(model, func)
            if decorator is None:
                continue
            if self._is_module_method(model, func):
                yield Finding(decorator, message="lru_cache/cache on a method of an nn.Module keeps `self` — the "
                                                 "module, its parameters and every cached tensor — alive forever")
            elif model.flow.takes_tensor(func) or model.flow.returns_tensor(func):
                yield Finding(decorator)
            elif (module := model.flow.module_parameter(func)) is not None:
                yield Finding(decorator, message=f"lru_cache/cache on a function taking a module (`{module}`) keeps "
                                                 f"every module passed in — its parameters and buffers — alive for the "
                                                 f"life of the process, even after the caller deleted it")

    @staticmethod
    def _caching_decorator(model: SemanticModel, func: cst.FunctionDef) -> Optional[cst.Decorator]:
        for decorator in func.decorators:
            expr = decorator.decorator
            if isinstance(expr, cst.Call):
                expr = expr.func
            if model.imports.qualify(expr) in _CACHING_DECORATORS:
                return decorator
        return None

    @staticmethod
    def _is_module_method(model: SemanticModel, func: cst.FunctionDef) -> bool:
        cls = model.scopes.class_of(func)
        if not model.scopes.is_torch_module_class(cls):
            return False
        static = any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in func.decorators)
        return not static
