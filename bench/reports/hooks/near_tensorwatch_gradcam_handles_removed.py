# Source: https://github.com/microsoft/tensorwatch/pull/74
# Report: Fix for tensorwatch issue #73: gradcam.py now keeps handle_forward_hook/handle_backward_hook and removes them after explain, so later predictions no longer grow GPU memory.
# Shape: fixed variant: hooks are registered for the duration of one explain() call and removed in `finally`; the activation list is reset per call, so it holds at most one forward's activations and nothing is captured by later predictions.
# Expect: near-miss: must be silent
import torch


def _get_layer(model, key_list):
    layer = model
    for key in key_list:
        layer = layer._modules[key]
    return layer


class GradCAMExplainer:
    def __init__(self, model, target_layer_name_keys):
        self.model = model
        self.target_layer = _get_layer(model, target_layer_name_keys)
        self.intermediate_act = []
        self.intermediate_grad = []
        self.handle_forward_hook = None
        self.handle_backward_hook = None

    def _forward_hook(self, m, i, o):
        self.intermediate_act.append(o.data.clone())

    def _backward_hook(self, m, grad_i, grad_o):
        self.intermediate_grad.append(grad_o[0].data.clone())

    def explain(self, inp, ind):
        self.intermediate_act = []
        self.intermediate_grad = []
        self.handle_forward_hook = self.target_layer.register_forward_hook(self._forward_hook)
        self.handle_backward_hook = self.target_layer.register_full_backward_hook(self._backward_hook)
        try:
            self.model.eval()
            self.model.zero_grad()
            output = self.model(inp.requires_grad_())
            grad_out = torch.zeros_like(output).scatter_(1, ind.unsqueeze(1), 1.0)
            output.backward(grad_out)
        finally:
            self.handle_forward_hook.remove()
            self.handle_backward_hook.remove()
        act, grad = self.intermediate_act[0], self.intermediate_grad[0]
        weights = grad.sum(dim=(-1, -2), keepdim=True)
        return torch.clamp((weights * act).sum(1, keepdim=True), min=0)


def run(model, img_batch, target):
    cam = GradCAMExplainer(model, ["layer4"]).explain(img_batch, target)
    with torch.no_grad():
        for _ in range(1000):
            probs = torch.softmax(model(img_batch), dim=1)
    return cam, probs
