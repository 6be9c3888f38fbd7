# Source: https://github.com/NVlabs/Deep_Object_Pose/issues/13
# Report: Dataset.__getitem__ runs a network on each image and moves the tensor with Variable(...).cuda(); with DataLoader workers it fails with "cuda runtime error (3): initialization error"
# Shape: MultipleVertexJson-style dataset whose __getitem__ loads an image, transforms it, sends it to CUDA and runs a belief-map net before returning a dict
# Expect: TML010 line 34
import json

import torch
import torch.utils.data as data
from PIL import Image
from torch.autograd import Variable


class MultipleVertexJson(data.Dataset):
    def __init__(self, imgs, net, transform=None, target_transform=None):
        self.imgs = imgs  # list of (image_path, json_path)
        self.net = net
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
        data = Variable(image_tensor).cuda()  # expect: TML010
        out, seg = self.net(data.unsqueeze(0))
        beliefs = out[-1].squeeze(0).detach().cpu()
        affinities = seg[-1].squeeze(0).detach().cpu()
        if self.target_transform is not None:
            points = self.target_transform(points)
        return {
            "img": image_tensor,
            "beliefs": beliefs,
            "affinities": affinities,
            "points": points,
        }


def make_loader(imgs, net, transform, batch_size=32, workers=8):
    dataset = MultipleVertexJson(imgs, net, transform=transform)
    return torch.utils.data.DataLoader(
        dataset, batch_size=batch_size, shuffle=True, num_workers=workers
    )
