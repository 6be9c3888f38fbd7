# Source: https://github.com/mseitzer/pytorch-fid/blob/master/src/pytorch_fid/fid_score.py
# Report: variant of pytorch-fid's get_activations "kept on the GPU to speed up the covariance": each batch's pooled Inception features are appended to a Python list as CUDA tensors and only concatenated at the end
# Shape: pred is produced under no_grad (no graph) but stays a device tensor; the list outlives the loop, so all 50k x 2048 features accumulate on the GPU before torch.cat
# Expect: TML004 line 44
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

    preds = []
    for batch in loader:
        batch = batch.to(device)
        with torch.no_grad():
            pred = model(batch)[0]

        # pool to 1x1 when the chosen block is not the final 2048-d one
        if pred.size(2) != 1 or pred.size(3) != 1:
            pred = adaptive_avg_pool2d(pred, output_size=(1, 1))

        pred = pred.squeeze(3).squeeze(2)
        preds.append(pred)  # expect: TML004
    return torch.cat(preds, dim=0)


def activation_statistics(files, model, batch_size=50, dims=2048, device="cuda"):
    act = get_activations(files, model, batch_size, dims, device)
    mu = act.mean(dim=0)
    centered = act - mu
    sigma = centered.T @ centered / (act.shape[0] - 1)
    return mu.cpu().numpy(), sigma.cpu().numpy()
