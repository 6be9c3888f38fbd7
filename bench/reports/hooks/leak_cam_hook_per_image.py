# Source: https://iquanku.com/read/th-fastai-book/spilt.1.20b17a5a56ea9b6f.md
# Report: fastai book CAM chapter: a Hook object stores the last conv activations via register_forward_hook; the hook must be removed after use, otherwise it leaks memory
# Shape: a batch CAM exporter registers a fresh storing hook on the CNN body for every image and never removes the handle
# Expect: TML007 line 37
import torch
import torch.nn.functional as F


class Hook:
    """Keeps a copy of whatever the hooked layer produced last."""

    def __init__(self):
        self.stored = None

    def hook_func(self, module, inp, out):
        self.stored = out.detach().clone()


def cam_from_activations(act, fc_weight, cls):
    # act: (C, H, W), fc_weight: (num_classes, C)
    cam = torch.einsum("ck,kij->cij", fc_weight, act)
    cam = F.relu(cam[cls])
    return cam / (cam.max() + 1e-8)


def export_cams(model, images, out_dir, device="cuda"):
    """model = nn.Sequential(body, head) as produced by a cnn learner."""
    model = model.to(device).eval()
    body, head = model[0], model[1]
    fc_weight = head[-1].weight
    cams = {}
    for name, img in images:
        x = img.unsqueeze(0).to(device)
        hook_output = Hook()
        # registered again for every picture: the body ends up with one
        # extra hook (and one stored activation map) per exported image
        body.register_forward_hook(hook_output.hook_func)  # expect: TML007
        with torch.no_grad():
            logits = model(x)
        cls = int(logits.argmax(dim=1))
        act = hook_output.stored[0]
        cam = cam_from_activations(act, fc_weight.detach(), cls)
        cams[name] = cam.cpu()
        torch.save(cams[name], f"{out_dir}/{name}_cam.pt")
    return cams
