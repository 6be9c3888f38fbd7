# Source: https://github.com/e-lab/pytorch-toolbox/issues/6
# Report: calling the toolbox's profile() again and again (notebook re-runs) re-registered the op-counting forward hooks every call, so counts and hooks piled up.
# Shape: the reporter's fix: every handle returned by register_forward_hook is kept in a list and removed in a finally block before count_flops() returns.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


def _conv_ops(m, inp, out):
    k = m.kernel_size[0] * m.kernel_size[1] * (m.in_channels // m.groups)
    m.flop_count += out.numel() * (2 * k - 1 + (m.bias is not None))


def _linear_ops(m, inp, out):
    m.flop_count += out.numel() * (2 * m.in_features - 1)


def _elementwise_ops(m, inp, out):
    m.flop_count += inp[0].numel()


COUNTERS = {nn.Conv2d: _conv_ops, nn.Linear: _linear_ops,
            nn.ReLU: _elementwise_ops, nn.BatchNorm2d: _elementwise_ops}


def count_flops(model, input_shape, device="cuda"):
    model.eval()
    handles = []
    for m in model.modules():
        if len(list(m.children())) > 0:
            continue
        m.flop_count = 0
        counter = COUNTERS.get(type(m))
        if counter is not None:
            handles.append(m.register_forward_hook(counter))
    try:
        with torch.no_grad():
            model(torch.zeros(1, *input_shape, device=device))
        total = sum(getattr(m, "flop_count", 0) for m in model.modules())
    finally:
        for h in handles:
            h.remove()
    n_params = sum(p.numel() for p in model.parameters())
    return total, n_params


def resolution_sweep(model, resolutions=(128, 160, 192, 224, 256, 320)):
    report = {}
    for res in resolutions:
        flops, params = count_flops(model, (3, res, res))
        report[res] = {"gflops": flops / 1e9, "mparams": params / 1e6}
        print(f"{res}px: {flops / 1e9:.2f} GFLOPs, {params / 1e6:.2f} M params")
    return report
