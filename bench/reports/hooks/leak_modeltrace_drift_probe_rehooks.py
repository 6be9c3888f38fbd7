# Source: https://github.com/MANISH-K-07/ModelTrace/blob/1ff3d814c932575fadb19440b2abc2908339ea30/modeltrace/core/inspector.py
# Report: audit of ModelTrace's ModelInspector: the repo hooks every submodule once (in __init__), clears the shared activation dict before each probe and stores output.detach().cpu(); this is the variant it avoided, where the probe method hooks all layers again on every call and drops the handles, so a drift monitor that probes once per batch stacks one more hook per layer per batch
# Shape: ActivationInspector.capture() walks named_modules and registers a fresh closure on each layer before running the probe; compute_drift() calls capture() twice and the monitor loop calls compute_drift() for every batch of the loader
# Expect: TML007 line 40
import numpy as np
import torch
import torch.nn as nn


class SimpleCNN(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(4)
        self.fc = nn.Linear(32 * 16, num_classes)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        return self.fc(self.pool(x).flatten(1))


class ActivationInspector:
    def __init__(self, model):
        self.model = model.eval()
        self.activations = {}

    def _make_hook(self, name):
        def hook(module, inputs, output):
            if torch.is_tensor(output):
                self.activations[name] = output.detach().cpu()
        return hook

    def capture(self, x):
        self.activations.clear()
        for name, layer in self.model.named_modules():
            if name == "":
                continue
            layer.register_forward_hook(self._make_hook(name))  # expect: TML007
        with torch.no_grad():
            self.model(x)
        return {k: v.clone() for k, v in self.activations.items()}

    def compute_drift(self, x_a, x_b):
        acts_a = self.capture(x_a)
        acts_b = self.capture(x_b)
        diffs = [(acts_a[k] - acts_b[k]).abs().mean().item() for k in acts_a if k in acts_b]
        return float(np.mean(diffs)) if diffs else 0.0


def monitor_shift(model, loader, noise_scale=3.0, device="cuda", log_every=50):
    model = model.to(device)
    inspector = ActivationInspector(model)
    report = {"drift": [], "output_shift": []}
    for step, (images, _) in enumerate(loader):
        images = images.to(device)
        shifted = images * noise_scale
        report["drift"].append(inspector.compute_drift(images, shifted))
        with torch.no_grad():
            shift = (model(images) - model(shifted)).abs().mean().item()
        report["output_shift"].append(shift)
        if step % log_every == 0:
            print(f"step {step}: drift={report['drift'][-1]:.4f} output_shift={shift:.4f}")
    return {k: float(np.mean(v)) for k, v in report.items()}


if __name__ == "__main__":
    data = torch.utils.data.TensorDataset(torch.randn(2048, 1, 8, 8), torch.zeros(2048))
    loader = torch.utils.data.DataLoader(data, batch_size=32)
    print(monitor_shift(SimpleCNN(), loader))
