# Source: https://github.com/cfzd/Ultra-Fast-Lane-Detection-v2/issues/160
# Report: using the repository's my_interp on a custom dataset needs the data on CUDA, and calling data.cuda() while loading raised "Cannot re-initialize CUDA in forked subprocess".
# Shape: the CUDA transfer happens in a collate function given to the DataLoader through functools.partial, before a CUDA-only interpolation helper.
# Expect: TML010 line 19
from functools import partial

import torch
from torch.utils.data import DataLoader


def lane_interp(points, num_rows):
    assert points.is_cuda, "the interpolation kernel runs on CUDA only"
    rows = torch.linspace(0, 1, num_rows, device=points.device)
    return torch.stack([torch.nn.functional.interpolate(p[None, None], size=num_rows, mode="linear")[0, 0] for p in points]), rows


def collate_lanes(samples, device, num_rows=72):
    images = torch.stack([s["image"] for s in samples])
    points = torch.stack([s["lane_points"] for s in samples]).to(device)  # expect: TML010
    lanes, rows = lane_interp(points, num_rows)
    return images, lanes


def make_loader(dataset, device="cuda"):
    return DataLoader(dataset, batch_size=16, num_workers=8, collate_fn=partial(collate_lanes, device=device))
