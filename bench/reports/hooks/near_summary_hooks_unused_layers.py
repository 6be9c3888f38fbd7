# Source: https://github.com/Lightning-AI/pytorch-lightning/pull/2298
# Report: the model-summary forward hooks were meant to remove themselves after one call, but on layers the forward pass never reaches they stayed registered and piled up each time a summary was built
# Shape: the fix: ModelSummary detaches every layer's hook right after the example forward pass, whether or not the layer ran
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class LayerSummary:
    def __init__(self, module: nn.Module):
        self._module = module
        self.in_size = "?"
        self.out_size = "?"
        self._hook_handle = self._module.register_forward_hook(self._record)

    def _record(self, module, inputs, output):
        self.in_size = list(inputs[0].shape) if inputs else "?"
        self.out_size = list(output.shape) if torch.is_tensor(output) else "?"

    def detach_hook(self):
        if self._hook_handle is not None:
            self._hook_handle.remove()
            self._hook_handle = None

    @property
    def num_parameters(self):
        return sum(p.numel() for p in self._module.parameters())


class ModelSummary:
    def __init__(self, model: nn.Module, example_input: torch.Tensor):
        self.layers = {
            name: LayerSummary(module)
            for name, module in model.named_children()
        }
        try:
            with torch.no_grad():
                model(example_input)
        finally:
            for layer in self.layers.values():
                layer.detach_hook()

    def __str__(self):
        rows = [f"{n:<12} {s.num_parameters:>10,d}  {s.in_size} -> {s.out_size}"
                for n, s in self.layers.items()]
        return "\n".join(rows)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256))
        self.head = nn.Linear(256, 10)
        self.aux_head = nn.Linear(256, 10)

    def forward(self, x):
        return self.head(self.backbone(x))


def run_stages(model, stages, example_input, fit_stage):
    for stage in stages:
        print(f"== stage {stage} ==")
        print(ModelSummary(model, example_input))
        fit_stage(model, stage)
