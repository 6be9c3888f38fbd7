# Source: https://github.com/jacobgil/pytorch-grad-cam/issues/88
# Report: a CAM object registers forward/backward hooks (bound methods) on the target layer in __init__ and never removes them; creating one per image leaks the hooks, the CAM objects and the activations they hold.
# Shape: SaliencyCAM.__init__ registers two hooks on a layer of the long-lived model and drops the handles; explain_folder() builds a new SaliencyCAM for every image.
# Expect: TML007 line 17; TML007 line 18
import torch
import torch.nn.functional as F


class SaliencyCAM:
    def __init__(self, model, target_layer, device="cuda"):
        self.model = model.eval()
        self.target_layer = target_layer
        self.device = device
        self.activation = None
        self.gradient = None
        # the layer now holds a reference to this object through the bound methods
        target_layer.register_forward_hook(self._save_activation)  # expect: TML007
        target_layer.register_full_backward_hook(self._save_gradient)  # expect: TML007

    def _save_activation(self, module, inputs, output):
        self.activation = output

    def _save_gradient(self, module, grad_input, grad_output):
        self.gradient = grad_output[0]

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
        return cam.detach().cpu().numpy()[0]


def explain_folder(model, dataset, out_dir):
    maps = {}
    for idx in range(len(dataset)):
        image, label = dataset[idx]
        cam = SaliencyCAM(model, model.layer4)
        maps[idx] = cam(image, class_idx=label)
        del cam
    torch.save(maps, f"{out_dir}/cams.pt")
    return maps
