# Source: https://github.com/shyhyawJou/GradCAM-pytorch/blob/188a1820c845145fb850bdc7dbd572cc9884a420/gradcam.py
# Report: the repo registers its Grad-CAM forward/backward hooks once before the per-image loop; this variant moves the registration into the loop
# Shape: register_forward_hook / register_full_backward_hook on the persistent model's layer every image, handles never removed: hooks pile up
# Expect: TML007 lines 49, 50
import shutil
from pathlib import Path

import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class CamNet(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(32, 64, 3, padding=1), nn.ReLU())
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(64, n_classes)
        self.fwd_store = {}
        self.bwd_store = {}

    def f_hook(self, module, inp, out):
        self.fwd_store["output"] = out

    def b_hook(self, module, grad_in, grad_out):
        self.bwd_store["output"] = grad_out

    def forward(self, x):
        return self.fc(self.pool(self.features(x)).flatten(1))


def last_conv_name(model):
    prev = None
    for name, child in model.named_children():
        if isinstance(child, (nn.AdaptiveAvgPool2d, nn.AvgPool2d)):
            return prev
        prev = name


def dump_heatmaps(model, loaders, out_dir, device):
    shutil.rmtree(out_dir, ignore_errors=True)
    model = model.to(device).eval()
    layer_name = last_conv_name(model)
    for split, loader in loaders.items():
        for inputs, labels, paths in loader:
            for name, module in model.named_modules():
                if name == layer_name:
                    module.register_forward_hook(model.f_hook)  # expect: TML007
                    module.register_full_backward_hook(model.b_hook)  # expect: TML007
            model.zero_grad()
            inputs = inputs.to(device)
            outputs = model(inputs)
            pred = outputs.argmax(1)
            outputs.squeeze(0)[pred.item()].backward()
            with torch.set_grad_enabled(False):
                fmap = model.fwd_store["output"]
                grads = model.bwd_store["output"][0]
                weights = grads.mean((2, 3), keepdim=True)
                cam = torch.relu((weights * fmap).sum(1))
                cam = cam / cam.max()
                cam = (cam * 255).to(dtype=torch.uint8, device="cpu")
            dst = Path(out_dir) / split / (Path(paths[0]).stem + "_cam.pt")
            dst.parent.mkdir(parents=True, exist_ok=True)
            torch.save(cam, dst)


if __name__ == "__main__":
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = CamNet(3)
    net.load_state_dict(torch.load("ckp/wt.pth", map_location="cpu"))
    loaders = {"test": DataLoader([], batch_size=1)}
    dump_heatmaps(net, loaders, "out", dev)
