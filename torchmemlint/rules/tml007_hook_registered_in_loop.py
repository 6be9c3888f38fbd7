"""TML007 hook-registered-in-loop.

## What it does
Flags `register_forward_hook`, `register_forward_pre_hook`, `register_full_backward_hook`,
`register_full_backward_pre_hook`, `register_backward_hook`, a parameter's `register_hook` (and
the global `torch.nn.modules.module.register_module_*` hooks) called on every iteration of a step
loop, in a per-step method (`forward`, `training_step`, ...), or in a method that the file calls
again and again on one object (`cam.generate(image)` for each image), on a persistent module or
parameter — `self.x`, a model bound before the loop, the modules or parameters of one,
`for block in self.blocks` — whose handle is never `.remove()`d.

## Why is this bad?
Each call adds one more hook; none replaces the previous one. After n iterations every forward
(or backward) runs n hooks, and each hook's closure keeps alive whatever it captured — often the
activations or gradients it was written to collect. Host and device memory grow and steps get
slower every iteration.

Silent when the handle is removed in the same iteration (`handle.remove()`, also through a
helper, a list of handles, or `with module.register_forward_hook(f):`), when registration is
guarded to happen once (`if handle is None:`), on a tensor created in the iteration
(`out.register_hook(f)` dies with `out`), and for one-time setup loops over
`model.named_modules()`.

## Example
```python
for images, _ in loader:
    model.layer4.register_forward_hook(lambda m, i, o: features.append(o))
    model(images)
```

## Use instead
```python
handle = model.layer4.register_forward_hook(lambda m, i, o: features.append(o))
for images, _ in loader:
    model(images)
handle.remove()
```

## Fix safety
No fix. Moving the registration before the loop changes what the hook's closure sees (it may
capture per-iteration variables); inserting `handle.remove()` at the end of the iteration changes
which later forward or backward passes run the hook (code after the loop may rely on it), and
`continue`/`break` paths would skip it. The intended lifetime of the hook is the author's call.

## Runtime signature
Live memory (host, and device when the closures hold tensors) grows every iteration, and step
time grows with the number of hooks (`confirmed-growth`).
"""
from __future__ import annotations

from typing import Iterator

from torchmemlint.rules.base import Finding, Rule
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.prescreen import HOOK


class HookRegisteredInLoop(Rule):
    code = "TML007"
    name = "hook-registered-in-loop"
    message = "hook registered on a persistent module every iteration and never removed: hooks and their closures pile up"
    triggers = ("register_",)

    keeping = frozenset({HOOK})

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        reported = set()
        for registration in model.hooks.registrations:
            pile = model.hooks.piles_up(registration)
            if pile is None:
                continue
            target = model.code(registration.receiver) if registration.receiver is not None else "every module"
            if pile.constructs is not None:  # the construction in the loop is what to change
                if pile.at in reported:
                    continue
                reported.add(pile.at)
                yield Finding(pile.at, related=[(registration.call, f"`{registration.method}` on `{target}`")],
                              message=f"`{pile.constructs}(...)` runs every iteration and its construction registers "
                                      f"`{registration.method}` on `{target}`, never removed: hooks and what their "
                                      f"closures capture pile up; build it once before the loop, or remove its hooks")
                continue
            related = [] if pile.at is registration.call else [(pile.at, "called here on every iteration")]
            yield Finding(registration.call, related=related,
                          message=f"`{registration.method}` on `{target}` runs every iteration and the handle is never "
                                  f"removed: hooks and what their closures capture pile up; register once before the "
                                  f"loop, or keep the handle and call `.remove()`")
