# Source: https://github.com/e-lab/pytorch-toolbox/issues/6
# Report: calling the toolbox's profile() again and again (notebook re-runs) re-registered the op-counting forward hooks every call, so counts and hooks piled up.
# Shape: count_flops() registers one forward hook per leaf module in a for-loop over model.modules(), discards the handles, and is called once per resolution in a sweep.
# Expect: TML007 line 34
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
    for m in model.modules():
        if len(list(m.children())) > 0:
            continue
        m.flop_count = 0
        counter = COUNTERS.get(type(m))
        if counter is not None:
            m.register_forward_hook(counter)  # expect: TML007
    with torch.no_grad():
        model(torch.zeros(1, *input_shape, device=device))
    total = sum(getattr(m, "flop_count", 0) for m in model.modules())
    n_params = sum(p.numel() for p in model.parameters())
    return total, n_params


def resolution_sweep(model, resolutions=(128, 160, 192, 224, 256, 320)):
    report = {}
    for res in resolutions:
        flops, params = count_flops(model, (3, res, res))
        report[res] = {"gflops": flops / 1e9, "mparams": params / 1e6}
        print(f"{res}px: {flops / 1e9:.2f} GFLOPs, {params / 1e6:.2f} M params")
    return report
