# Source: https://github.com/CosmiQ/solaris/issues/414
# Report: Inferer.__call__() put only model.eval() under torch.no_grad(); the tile forward pass ran with autograd on and used far more GPU memory
# Shape: the fixed callable class: eval() first, then the tile forward and the host copy run inside the torch.no_grad() block
# Expect: near-miss: must be silent
import os

import numpy as np
import torch
from skimage import io


class TileInferer:
    """Runs a segmentation model over every image listed in a dataframe."""

    def __init__(self, model, tiler, stitcher, output_dir, extra_inputs=None):
        self.model = model
        self.tiler = tiler
        self.stitcher = stitcher
        self.output_dir = output_dir
        self.extra_inputs = extra_inputs or []
        os.makedirs(self.output_dir, exist_ok=True)

    def _device(self):
        if torch.cuda.is_available():
            self.model = self.model.cuda()
            return torch.device("cuda")
        return torch.device("cpu")

    def _build_input(self, tiles, infer_df, idx, device):
        x = torch.from_numpy(tiles).float().to(device)
        if not self.extra_inputs:
            return x
        inputs = [x]
        for col in self.extra_inputs:
            inputs.append(infer_df[col].iloc[idx].to(device))
        return inputs

    def __call__(self, infer_df):
        for idx, im_path in enumerate(infer_df["image"]):
            tiles, idx_refs, (height, width) = self.tiler(im_path)

            self.model.eval()
            device = self._device()
            model_input = self._build_input(tiles, infer_df, idx, device)

            with torch.no_grad():
                # forward over all tiles of this image
                tile_preds = self.model(model_input)
                tile_preds = tile_preds.cpu().numpy()

            mosaic = self.stitcher(tile_preds, idx_refs=idx_refs,
                                   out_width=width, out_height=height)
            io.imsave(os.path.join(self.output_dir, os.path.basename(im_path)),
                      np.asarray(mosaic))
