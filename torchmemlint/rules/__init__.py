"""The rule catalogue: one module per rule, registered here in code order."""
from __future__ import annotations

from torchmemlint.rules.base import Rule
from torchmemlint.rules.tml001_graph_retained_accumulation import GraphRetainedAccumulation
from torchmemlint.rules.tml002_missing_zero_grad import MissingZeroGrad
from torchmemlint.rules.tml003_eval_without_no_grad import EvalWithoutNoGrad
from torchmemlint.rules.tml004_device_tensor_in_growing_container import DeviceTensorInGrowingContainer
from torchmemlint.rules.tml013_create_graph_backward import CreateGraphBackward
from torchmemlint.rules.tml014_no_grad_without_with import NoGradWithoutWith
from torchmemlint.rules.tml015_param_update_outside_no_grad import ParamUpdateOutsideNoGrad
from torchmemlint.rules.tml016_module_requires_grad_attribute import ModuleRequiresGradAttribute
from torchmemlint.rules.tml017_unbounded_eval_accumulation import UnboundedEvalAccumulation
from torchmemlint.rules.tml018_autograd_function_ctx_tensor import AutogradFunctionCtxTensor
from torchmemlint.rules.tml019_module_stores_activation import ModuleStoresActivation
from torchmemlint.rules.tml020_backward_for_input_gradient import BackwardForInputGradient

ALL_RULES: list[Rule] = sorted(
    [
        GraphRetainedAccumulation(),
        MissingZeroGrad(),
        EvalWithoutNoGrad(),
        DeviceTensorInGrowingContainer(),
        CreateGraphBackward(),
        NoGradWithoutWith(),
        ParamUpdateOutsideNoGrad(),
        ModuleRequiresGradAttribute(),
        UnboundedEvalAccumulation(),
        AutogradFunctionCtxTensor(),
        ModuleStoresActivation(),
        BackwardForInputGradient(),
    ],
    key=lambda rule: rule.code,
)
RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in ALL_RULES}
