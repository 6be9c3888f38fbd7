# Source: https://github.com/BloodAxe/pytorch-toolbelt/issues/41
# Report: tiled inference of a heavy-encoder UNet on a 6300x6304 image ran a few tiles and then hit CUDA OOM at the model call, even with 64x64 tiles and batch_size=1 on an 8 GB GPU
# Shape: the README-style fix: the tile loop runs under torch.no_grad(); the merger keeps one preallocated full-size CUDA buffer and adds each tile in place (fixed size, no growth)
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch.utils.data import DataLoader


class CudaTileMerger:
    def __init__(self, image_shape, channels, weight, device="cuda"):
        self.weight = torch.from_numpy(np.expand_dims(weight, axis=0)).float().to(device)
        self.image = torch.zeros((channels,) + tuple(image_shape), device=device)
        self.norm_mask = torch.zeros((1,) + tuple(image_shape), device=device)

    def integrate_batch(self, batch, crop_coords):
        for tile, (x, y, tile_width, tile_height) in zip(batch, crop_coords):
            self.image[:, y:y + tile_height, x:x + tile_width] += tile * self.weight
            self.norm_mask[:, y:y + tile_height, x:x + tile_width] += self.weight

    def merge(self):
        return self.image / self.norm_mask


def predict_large_image(model, tiler, image, to_tensor):
    model.eval()
    tiles = [to_tensor(tile) for tile in tiler.split(image)]
    merger = CudaTileMerger(tiler.target_shape, 1, tiler.weight)
    loader = DataLoader(list(zip(tiles, tiler.crops)), batch_size=1, pin_memory=True)
    with torch.no_grad():
        for tiles_batch, coords_batch in loader:
            tiles_batch = tiles_batch.float().cuda()
            pred_batch = model(tiles_batch)[:, 0:1, :, :]
            merger.integrate_batch(pred_batch, coords_batch)
    merged = merger.merge()
    return np.moveaxis(merged.cpu().numpy(), 0, -1)
