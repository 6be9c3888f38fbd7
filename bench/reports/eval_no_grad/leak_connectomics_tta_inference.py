# Source: https://github.com/PytorchConnectomics/pytorch_connectomics/issues/175
# Report: CUDA OOM in test mode: the sliding-window inference ran with gradients enabled and test-time augmentation kept all 8 predictions in a list before ensembling
# Shape: an inference helper class: sliding_window_predict() forwards patches with grad on and blends them into a canvas; the TTA loop appends every graph-carrying prediction
# Expect: TML003 line 34; TML001 line 37; TML001 line 49
import itertools

import torch


class VolumeInferer:
    def __init__(self, model, patch_size=(32, 256, 256), stride=(16, 128, 128), device="cuda"):
        self.model = model.to(device)
        self.patch_size = patch_size
        self.stride = stride
        self.device = device

    def _starts(self, length, patch, step):
        starts = list(range(0, max(length - patch, 0) + 1, step))
        if starts[-1] + patch < length:
            starts.append(length - patch)
        return starts

    def sliding_window_predict(self, volume):
        # volume: (1, C, D, H, W) on the device
        self.model.eval()
        _, _, d, h, w = volume.shape
        pd, ph, pw = self.patch_size
        canvas = None
        weight = torch.zeros((1, 1, d, h, w), device=self.device)
        for z, y, x in itertools.product(self._starts(d, pd, self.stride[0]),
                                         self._starts(h, ph, self.stride[1]),
                                         self._starts(w, pw, self.stride[2])):
            patch = volume[:, :, z:z + pd, y:y + ph, x:x + pw]
            logits = self.model(patch)  # expect: TML003
            if canvas is None:
                canvas = torch.zeros((1, logits.shape[1], d, h, w), device=self.device)
            canvas[:, :, z:z + pd, y:y + ph, x:x + pw] += logits  # expect: TML001
            weight[:, :, z:z + pd, y:y + ph, x:x + pw] += 1.0
        return canvas / weight.clamp(min=1.0)

    def predict_with_tta(self, volume, mode="mean"):
        flips = [[], [2], [3], [4], [2, 3], [2, 4], [3, 4], [2, 3, 4]]
        predictions = []
        for dims in flips:
            aug = torch.flip(volume, dims) if dims else volume
            pred = self.sliding_window_predict(aug)
            if dims:
                pred = torch.flip(pred, dims)
            predictions.append(torch.sigmoid(pred))  # expect: TML001
        stacked = torch.stack(predictions, dim=0)
        if mode == "min":
            return stacked.min(dim=0).values
        return stacked.mean(dim=0)
