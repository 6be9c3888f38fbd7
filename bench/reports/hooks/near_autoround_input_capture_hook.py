# Source: https://github.com/vllm-project/llm-compressor/issues/3023
# Report: a forward_pre input-capture hook on every decoding layer stayed active during the SignSGD tuning loop, so each mini-batch forward appended another hidden_states tensor (+204 MB/iter, OOM)
# Shape: same capture hook and dict-of-lists, but the hook offloads hidden_states to CPU and the handles are removed before the tuning loop, so tuning forwards no longer append
# Expect: near-miss: must be silent
from collections import defaultdict

import torch
import torch.nn.functional as F


class BlockRoundingTuner:
    def __init__(self, model, iters=200, lr=5e-3, grad_accum_steps=8):
        self.model = model
        self.iters = iters
        self.lr = lr
        self.grad_accum_steps = grad_accum_steps
        self._all_module_input = defaultdict(list)
        self._handles = []

    def _is_decoding_layer(self, module):
        return module.__class__.__name__.endswith("DecoderLayer")

    def input_capture_hook(self, module, args, kwargs):
        name = module._tmp_name
        hidden = args[0].detach().to("cpu")
        self._all_module_input[name].append(((hidden,) + tuple(args[1:]), kwargs))

    def on_calibration_start(self):
        for name, module in self.model.named_modules():
            if self._is_decoding_layer(module):
                module._tmp_name = name
                self._handles.append(
                    module.register_forward_pre_hook(self.input_capture_hook, with_kwargs=True)
                )

    def tune_block(self, layer, rounding_params):
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        device = next(layer.parameters()).device
        cached = [((a[0].to(device),) + tuple(a[1:]), kw) for a, kw in self._all_module_input[layer._tmp_name]]
        with torch.no_grad():
            targets = [layer(*a, **kw)[0] for a, kw in cached]
        opt = torch.optim.SGD(rounding_params, lr=self.lr)
        for it in range(self.iters):
            for step in range(self.grad_accum_steps):
                idx = (it * self.grad_accum_steps + step) % len(targets)
                args, kwargs = cached[idx]
                out = layer(*args, **kwargs)[0]
                loss = F.mse_loss(out, targets[idx]) / self.grad_accum_steps
                loss.backward()
            for p in rounding_params:
                p.grad.sign_()
            opt.step()
            opt.zero_grad()

    def on_sequential_epoch_end(self, layer, rounding_params):
        self.tune_block(layer, rounding_params)
        self._all_module_input.clear()
