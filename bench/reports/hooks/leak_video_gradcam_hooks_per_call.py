# Source: https://github.com/shinkyo0513/Towards-Visually-Explaining-Video-Understanding-Networks-With-Perturbation/issues/10
# Report: When grad_cam is run multiple times (once per video in main.py), its backward_hook and forward_hook are registered again on every call and never removed.
# Shape: grad_cam() looks up the observed layer and calls register_forward_hook/register_backward_hook on each invocation without keeping or removing the handles, so every video adds another pair of hooks to the layer; the hooks themselves keep only the latest tensor (single global, as in the corrected hook bodies).
# Expect: TML007 lines 29, 30
import torch
import torch.nn.functional as F

observ_grad_ = None
observ_actv_ = None


def backward_hook(m, i_grad, o_grad):
    global observ_grad_
    observ_grad_ = o_grad[0].detach()


def forward_hook(m, i, o):
    global observ_actv_
    observ_actv_ = o.detach()


def grad_cam(inputs, labels, model, device, layer_name):
    model.eval()
    bs, ch, nt, h, w = inputs.shape
    observ_layer = model
    for name in layer_name:
        observ_layer = dict(observ_layer.named_children())[name]

    observ_layer.register_backward_hook(backward_hook)  # expect: TML007
    observ_layer.register_forward_hook(forward_hook)  # expect: TML007

    inputs = inputs.to(device)
    outputs = model(inputs)
    actv = torch.repeat_interleave(observ_actv_, nt // observ_actv_.shape[2], dim=2)

    signal = torch.zeros_like(outputs)
    signal[torch.arange(bs), labels.to(device)] = 1.0
    outputs.backward(signal)
    grad = torch.repeat_interleave(observ_grad_, nt // observ_grad_.shape[2], dim=2)

    weights = grad.mean(dim=(3, 4), keepdim=True)
    masks = F.relu((weights * actv).sum(dim=1, keepdim=True))
    return (masks - masks.min()) / (masks.max() - masks.min() + 1e-8)


def explain_dataset(loader, model, device, layer_name=("layer4",)):
    results = []
    for inputs, labels in loader:
        results.append(grad_cam(inputs, labels, model, device, layer_name).cpu())
    return results
