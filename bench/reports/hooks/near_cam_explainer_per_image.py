# Source: https://github.com/jacobgil/pytorch-grad-cam/issues/88
# Report: a CAM object registers forward/backward hooks (bound methods) on the target layer in __init__ and never removes them; creating one per image leaks the hooks, the CAM objects and the activations they hold.
# Shape: the maintainers' fix: SaliencyCAM keeps both handles, stores detached tensors, and is used as a context manager whose __exit__ removes the hooks, so each per-image object leaves nothing on the model.
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


class SaliencyCAM:
    def __init__(self, model, target_layer, device="cuda"):
        self.model = model.eval()
        self.device = device
        self.activation = None
        self.gradient = None
        self.handles = [
            target_layer.register_forward_hook(self._save_activation),
            target_layer.register_full_backward_hook(self._save_gradient),
        ]

    def _save_activation(self, module, inputs, output):
        self.activation = output.detach()

    def _save_gradient(self, module, grad_input, grad_output):
        self.gradient = grad_output[0].detach()

    def release(self):
        for handle in self.handles:
            handle.remove()
        self.handles = []

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.release()
        return False

    def __call__(self, image, class_idx=None):
        image = image.to(self.device).unsqueeze(0)
        logits = self.model(image)
        if class_idx is None:
            class_idx = int(logits.argmax(dim=1))
        self.model.zero_grad()
        logits[0, class_idx].backward()
        weights = self.gradient.mean(dim=(2, 3), keepdim=True)
        cam = F.relu((weights * self.activation).sum(dim=1))
        cam = cam / (cam.max() + 1e-8)
        return cam.cpu().numpy()[0]


def explain_folder(model, dataset, out_dir):
    maps = {}
    for idx in range(len(dataset)):
        image, label = dataset[idx]
        with SaliencyCAM(model, model.layer4) as cam:
            maps[idx] = cam(image, class_idx=label)
    torch.save(maps, f"{out_dir}/cams.pt")
    return maps
