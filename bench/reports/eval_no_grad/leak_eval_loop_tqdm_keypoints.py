# Source: https://www.stubbornhuang.com/2322/
# Report: testing a custom network after model.eval() used up all GPU memory; cause was the missing `with torch.no_grad()` around the test loop
# Shape: test helper calls model.eval() then runs the whole loader with autograd on; outputs are only turned into numpy metrics
# Expect: TML003 line 38
import numpy as np
import torch
import torch.nn as nn
from tqdm import tqdm


class HeatmapNet(nn.Module):
    def __init__(self, joints=17):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.BatchNorm2d(128), nn.ReLU(),
            nn.Conv2d(128, 256, 3, padding=1), nn.BatchNorm2d(256), nn.ReLU(),
        )
        self.head = nn.Conv2d(256, joints, 1)

    def forward(self, x):
        return self.head(self.backbone(x))


def heatmap_argmax(heatmaps):
    b, j, h, w = heatmaps.shape
    flat = heatmaps.reshape(b, j, -1).argmax(-1)
    return torch.stack([flat % w, flat // w], dim=-1).float()


def test_network(model, data_loader, device="cuda:0"):
    model.eval()
    distances = []
    for batch_idx, data in enumerate(tqdm(data_loader)):
        image = data[0].to(device)
        target_xy = data[1].to(device)

        heatmaps = model(image)  # expect: TML003
        pred_xy = heatmap_argmax(heatmaps)
        err = (pred_xy - target_xy).norm(dim=-1).mean(dim=-1)
        distances.append(err.cpu().numpy())

    distances = np.concatenate(distances)
    print(f"mean keypoint error: {distances.mean():.3f} px over {len(distances)} images")
    return float(distances.mean())
