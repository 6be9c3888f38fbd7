# Source: https://github.com/mseitzer/pytorch-fid/blob/master/src/pytorch_fid/fid_score.py
# Report: pytorch-fid's get_activations runs InceptionV3 per batch under torch.no_grad() and writes each batch's pooled features into a preallocated numpy array
# Shape: pred comes from the model under no_grad, is squeezed, moved with .cpu().numpy() and copied into a host array slice: nothing stays on the GPU between batches
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch.nn.functional import adaptive_avg_pool2d
from PIL import Image
import torchvision.transforms as TF


class ImageFiles(torch.utils.data.Dataset):
    def __init__(self, files, transforms=None):
        self.files = files
        self.transforms = transforms

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        img = Image.open(self.files[i]).convert("RGB")
        return self.transforms(img) if self.transforms is not None else img


def get_activations(files, model, batch_size=50, dims=2048, device="cuda", num_workers=4):
    model.eval()
    batch_size = min(batch_size, len(files))
    loader = torch.utils.data.DataLoader(
        ImageFiles(files, transforms=TF.ToTensor()),
        batch_size=batch_size, shuffle=False, drop_last=False, num_workers=num_workers,
    )

    pred_arr = np.empty((len(files), dims))
    start = 0
    for batch in loader:
        batch = batch.to(device)
        with torch.no_grad():
            pred = model(batch)[0]

        # pool to 1x1 when the chosen block is not the final 2048-d one
        if pred.size(2) != 1 or pred.size(3) != 1:
            pred = adaptive_avg_pool2d(pred, output_size=(1, 1))

        pred = pred.squeeze(3).squeeze(2).cpu().numpy()
        pred_arr[start:start + pred.shape[0]] = pred
        start += pred.shape[0]
    return pred_arr


def activation_statistics(files, model, batch_size=50, dims=2048, device="cuda"):
    act = get_activations(files, model, batch_size, dims, device)
    return np.mean(act, axis=0), np.cov(act, rowvar=False)
