"""The rule catalogue: one module per rule, registered here in code order."""
from __future__ import annotations

from torchmemlint.rules.base import Rule
from torchmemlint.rules.tml001_graph_retained_accumulation import GraphRetainedAccumulation
from torchmemlint.rules.tml002_missing_zero_grad import MissingZeroGrad
from torchmemlint.rules.tml003_eval_without_no_grad import EvalWithoutNoGrad
from torchmemlint.rules.tml004_device_tensor_in_growing_container import DeviceTensorInGrowingContainer
from torchmemlint.rules.tml005_loop_carried_graph import LoopCarriedGraph
from torchmemlint.rules.tml006_retain_graph_in_loop import RetainGraphInLoop
from torchmemlint.rules.tml007_hook_registered_in_loop import HookRegisteredInLoop
from torchmemlint.rules.tml008_concat_accumulator_in_loop import ConcatAccumulatorInLoop
from torchmemlint.rules.tml009_empty_cache_in_loop import EmptyCacheInLoop
from torchmemlint.rules.tml010_cuda_in_dataloader_worker import CudaInDataloaderWorker
from torchmemlint.rules.tml011_torch_load_without_map_location import TorchLoadWithoutMapLocation
from torchmemlint.rules.tml012_cached_tensor_function import CachedTensorFunction
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
        LoopCarriedGraph(),
        RetainGraphInLoop(),
        HookRegisteredInLoop(),
        ConcatAccumulatorInLoop(),
        EmptyCacheInLoop(),
        CudaInDataloaderWorker(),
        TorchLoadWithoutMapLocation(),
        CachedTensorFunction(),
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
