# Source: https://github.com/NVlabs/Deep_Object_Pose/issues/13
# Report: Dataset.__getitem__ runs a network on each image and moves the tensor with Variable(...).cuda(); with DataLoader workers it fails with "cuda runtime error (3): initialization error"
# Shape: fixed: __getitem__ only returns CPU tensors; the CUDA copy and the network pass happen in the main-process loop over the loader
# Expect: near-miss: must be silent
import json

import torch
import torch.utils.data as data
from PIL import Image


class MultipleVertexJson(data.Dataset):
    def __init__(self, imgs, transform=None, target_transform=None):
        self.imgs = imgs  # list of (image_path, json_path)
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self):
        return len(self.imgs)

    def _load_points(self, json_path):
        with open(json_path) as f:
            anno = json.load(f)
        pts = [obj["projected_cuboid"] for obj in anno["objects"]]
        return torch.tensor(pts, dtype=torch.float32)

    def __getitem__(self, index):
        path, json_path = self.imgs[index]
        img = Image.open(path).convert("RGB")
        points = self._load_points(json_path)
        image_tensor = self.transform(img)
        if self.target_transform is not None:
            points = self.target_transform(points)
        return {"img": image_tensor, "points": points}


@torch.no_grad()
def precompute_targets(loader, net):
    results = []
    for batch in loader:
        data = batch["img"].cuda(non_blocking=True)
        out, seg = net(data)
        results.append((out[-1].cpu(), seg[-1].cpu(), batch["points"]))
    return results


def make_loader(imgs, transform, batch_size=32, workers=8):
    dataset = MultipleVertexJson(imgs, transform=transform)
    return torch.utils.data.DataLoader(
        dataset, batch_size=batch_size, shuffle=False, num_workers=workers, pin_memory=True
    )
