# Source: https://github.com/microsoft/tensorwatch/issues/73
# Report: After one gradcam saliency call, GPU memory keeps increasing over 1000 later no_grad predictions because gradcam.py's forward hook on the target layer is still registered.
# Shape: GradCAMExplainer registers its hooks once in __init__ without keeping handles; the forward hook appends a clone of every target-layer output to self.intermediate_act, so each later model(x) in predict() adds a CUDA tensor to the list (backward hook here keeps only the latest grad).
# Expect: TML004 line 27
import torch


def _get_layer(model, key_list):
    layer = model
    for key in key_list:
        layer = layer._modules[key]
    return layer


class GradCAMExplainer:
    def __init__(self, model, target_layer_name_keys, use_inp=False):
        self.model = model
        self.target_layer = _get_layer(model, target_layer_name_keys)
        self.use_inp = use_inp
        self.intermediate_act = []
        self.intermediate_grad = None
        self._register_forward_backward_hook()

    def _register_forward_backward_hook(self):
        def forward_hook(m, i, o):
            act = i[0] if self.use_inp else o
            self.intermediate_act.append(act.data.clone())  # expect: TML004

        def backward_hook(m, grad_i, grad_o):
            self.intermediate_grad = grad_o[0].data.clone()

        self.target_layer.register_forward_hook(forward_hook)
        self.target_layer.register_full_backward_hook(backward_hook)

    def explain(self, inp, ind):
        self.intermediate_act = []
        self.model.eval()
        self.model.zero_grad()
        output = self.model(inp.requires_grad_())
        grad_out = torch.zeros_like(output).scatter_(1, ind.unsqueeze(1), 1.0)
        output.backward(grad_out)
        act = self.intermediate_act[0]
        weights = self.intermediate_grad.sum(dim=(-1, -2), keepdim=True)
        return torch.clamp((weights * act).sum(1, keepdim=True), min=0)


def predict(model, images):
    with torch.no_grad():
        return torch.softmax(model(images), dim=1)


def run(model, img_batch, target):
    cam = GradCAMExplainer(model, ["layer4"]).explain(img_batch, target)
    for _ in range(1000):
        probs = predict(model, img_batch)  # target layer still appends to the list
    return cam, probs
