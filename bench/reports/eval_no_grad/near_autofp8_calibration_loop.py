# Source: https://github.com/neuralmagic/AutoFP8/pull/20
# Report: calibrating a Llama-3-8B with an ~8192-token input to record FP8 activation scales OOMs on an 80 GB H100; adding `with torch.inference_mode():` around the calibration loop brings the peak to ~15 GB (source note: code shape: https://github.com/neuralmagic/AutoFP8/blob/084feb8cb0fb341e8a30c1a4288d3a092fd09490/auto_fp8/quantize.py)
# Shape: the merged fix: the same observers and the same loop, but the calibration passes run under torch.inference_mode() and the cache cleanup happens once after the loop
# Expect: near-miss: must be silent
import gc

import torch
import tqdm

FP8 = torch.float8_e4m3fn


def cleanup_memory():
    gc.collect()
    torch.cuda.empty_cache()


def per_tensor_quantize(tensor):
    finfo = torch.finfo(FP8)
    min_val, max_val = tensor.aminmax()
    amax = torch.maximum(min_val.abs(), max_val.abs())
    scale = finfo.max / amax.clamp(min=1e-12)
    qweight = (tensor * scale).clamp(min=finfo.min, max=finfo.max).to(FP8)
    return qweight, scale.float().reciprocal()


class FP8StaticLinearQuantizer(torch.nn.Module):
    """Observer: dequantized matmul that remembers the largest input scale seen."""

    def __init__(self, weight, weight_scale, bias):
        super().__init__()
        self.weight = torch.nn.Parameter(weight, requires_grad=False)
        self.weight_scale = torch.nn.Parameter(weight_scale, requires_grad=False)
        self.bias = bias
        self.input_scale = None

    def forward(self, x):
        qinput, x_input_scale = per_tensor_quantize(x)
        if self.input_scale is None or x_input_scale > self.input_scale:
            self.input_scale = torch.nn.Parameter(x_input_scale, requires_grad=False)
        w = self.weight.to(x.dtype) * self.weight_scale.to(x.dtype)
        return torch.nn.functional.linear(qinput.to(x.dtype) * self.input_scale, w, self.bias)


def replace_module(model, name, new_module):
    parent_name, _, child_name = name.rpartition(".")
    parent = model.get_submodule(parent_name) if parent_name else model
    setattr(parent, child_name, new_module)


def quantize_activations(model, quantize_config, calibration_tokens):
    for name, linear in list(model.named_modules()):
        if not isinstance(linear, torch.nn.Linear) or name in quantize_config.ignored_layers:
            continue
        qweight, wscale = per_tensor_quantize(linear.weight.data)
        replace_module(model, name, FP8StaticLinearQuantizer(qweight, wscale, linear.bias))
    cleanup_memory()

    model.eval()
    with torch.inference_mode(), tqdm.tqdm(total=calibration_tokens.shape[0], desc="Calibrating activation scales") as pbar:
        for row_idx in range(calibration_tokens.shape[0]):
            model(calibration_tokens[row_idx].reshape(1, -1))
            pbar.update(1)
    cleanup_memory()

    scales = {}
    for name, module in model.named_modules():
        if isinstance(module, FP8StaticLinearQuantizer):
            scales[name] = module.input_scale.item()
    return scales
