"""TML018's fix with several stores: fixture lines carry ``# expect:`` comments, and the fix never
drops a line with a comment, so the multi-store rewrite is checked here on comment-free code."""
from __future__ import annotations

import textwrap

from torchmemlint.engine import check_source
from torchmemlint.fix import fix_source
from torchmemlint.rules import RULES_BY_CODE

SOURCE = textwrap.dedent('''\
    import torch


    class LinearFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input, weight, bias=None):
            output = input.mm(weight.t())
            ctx.input = input
            ctx.weight = weight
            ctx.has_bias = bias is not None
            ctx.bias = bias  # the bias may be None: save_for_backward accepts that
            return output if bias is None else output + bias.unsqueeze(0)

        @staticmethod
        def backward(ctx, grad_output):
            """Gradients of input, weight and bias."""
            grad_input = grad_output.mm(ctx.weight)
            grad_weight = grad_output.t().mm(ctx.input)
            grad_bias = grad_output.sum(0) if ctx.has_bias else None
            return grad_input, grad_weight, grad_bias
''')

FIXED = textwrap.dedent('''\
    import torch


    class LinearFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input, weight, bias=None):
            output = input.mm(weight.t())
            ctx.has_bias = bias is not None
            ctx.save_for_backward(input, weight, bias)  # the bias may be None: save_for_backward accepts that
            return output if bias is None else output + bias.unsqueeze(0)

        @staticmethod
        def backward(ctx, grad_output):
            """Gradients of input, weight and bias."""
            input, weight, bias = ctx.saved_tensors
            grad_input = grad_output.mm(weight)
            grad_weight = grad_output.t().mm(input)
            grad_bias = grad_output.sum(0) if ctx.has_bias else None
            return grad_input, grad_weight, grad_bias
''')


def test_several_stores_become_one_save_for_backward() -> None:
    rules = [RULES_BY_CODE["TML018"]]
    diagnostics, _ = check_source(SOURCE.encode(), "fn.py", rules)
    assert [d.line for d in diagnostics] == [8, 9, 11]
    result = fix_source(SOURCE.encode(), "fn.py", rules, unsafe=True)
    assert result.source.decode() == FIXED
    assert check_source(result.source, "fn.py", rules)[0] == []


def test_no_fix_when_another_method_reads_the_attribute() -> None:
    source = SOURCE.replace('    @staticmethod\n    def backward', '    @staticmethod\n    def jvp(ctx, g):\n'
                            '        return g.mm(ctx.weight.t())\n\n    @staticmethod\n    def backward')
    diagnostics, _ = check_source(source.encode(), "fn.py", [RULES_BY_CODE["TML018"]])
    assert diagnostics and all(d.fix is None for d in diagnostics)
