# Source: https://github.com/LiorOhana94/Pneumonia-Detection-System/blob/5173eca78cb56c92ad6412179c5c1ada5f16bfc4/net/model.py
# Report: audit of a chest X-ray VGG wrapper used for Grad-CAM: forward() hooks the feature map on every call; the repo registers the hook on the freshly computed tensor, this is the variant it avoided, hooking the persistent conv trunk module in forward so one more hook (and its closure) piles up per forward
# Shape: nn.Module wrapper with self.gradients / self.activations filled by hook methods; forward registers a forward hook on self.trunk each call and never keeps or removes the handle; used by a fine-tune loop and a per-scan heatmap loop
# Expect: TML007 line 31
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision


class XrayCamNet(nn.Module):
    def __init__(self, num_classes=2):
        super().__init__()
        vgg = torchvision.models.vgg16(weights=None)
        self.trunk = vgg.features[:-1]
        self.pool = nn.MaxPool2d(2, 2)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(512 * 7 * 7, 256), nn.ReLU(),
                                  nn.Dropout(0.2), nn.Linear(256, num_classes))
        self.gradients = None
        self.activations = None

    def _keep_gradient(self, grad):
        self.gradients = grad

    def _on_trunk_output(self, module, inputs, output):
        self.activations = output.detach()
        if output.requires_grad:
            output.register_hook(self._keep_gradient)

    def forward(self, x):
        self.trunk.register_forward_hook(self._on_trunk_output)  # expect: TML007
        feats = self.trunk(x)
        return self.head(self.pool(feats))


def finetune(model, loader, epochs=5, device="cuda"):
    opt = torch.optim.Adam(model.head.parameters(), lr=1e-4)
    criterion = nn.CrossEntropyLoss()
    model.to(device).train()
    for epoch in range(epochs):
        running = 0.0
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            opt.zero_grad()
            loss = criterion(model(images), labels)
            loss.backward()
            opt.step()
            running += loss.item() * images.size(0)
        print(f"epoch {epoch}: {running / len(loader.dataset):.4f}")


def heatmaps(model, scans, device="cuda"):
    model.to(device).eval()
    maps = {}
    for scan_id, image in scans:
        image = image.unsqueeze(0).to(device).requires_grad_(True)
        logits = model(image)
        cls = int(logits.argmax(dim=1))
        model.zero_grad()
        logits[0, cls].backward()
        weights = model.gradients.mean(dim=(2, 3), keepdim=True)
        cam = F.relu((weights * model.activations).sum(dim=1)).squeeze(0)
        cam = cam / (cam.max() + 1e-8)
        maps[scan_id] = (cls, cam.cpu().numpy())
    return maps
