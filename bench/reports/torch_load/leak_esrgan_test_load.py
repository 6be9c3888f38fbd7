# Source: https://github.com/xinntao/ESRGAN/blob/d274b11e25f93cb8fc81b65fe40115e52c08d51b/test.py
# Report: audit: the ESRGAN test script loads the generator checkpoint with torch.load(model_path) and no map_location before model.to(device); the sibling net_interp.py loads two checkpoints the same way, so every tensor comes back on the device it was saved from
# Shape: a super-resolution inference script with a weight-interpolation helper (PSNR/GAN blend) and a plain loader, both calling torch.load without map_location; inference itself runs under no_grad
# Expect: TML011 line 22; TML011 line 23; TML011 line 33
import glob
import os.path as osp
from collections import OrderedDict

import cv2
import numpy as np
import torch

import RRDBNet_arch as arch

MODEL_PATH = "models/RRDB_ESRGAN_x4.pth"
PSNR_PATH = "models/RRDB_PSNR_x4.pth"
device = torch.device("cuda")  # change to 'cpu' to run without a GPU


def interpolate_weights(alpha):
    # blend the PSNR-oriented and the GAN generator, as net_interp.py does
    net_psnr = torch.load(PSNR_PATH)  # expect: TML011
    net_esrgan = torch.load(MODEL_PATH)  # expect: TML011
    blended = OrderedDict()
    for k, v_psnr in net_psnr.items():
        blended[k] = (1 - alpha) * v_psnr + alpha * net_esrgan[k]
    return blended


def build_model(alpha=None):
    model = arch.RRDBNet(3, 3, 64, 23, gc=32)
    if alpha is None:
        state = torch.load(MODEL_PATH)  # expect: TML011
    else:
        state = interpolate_weights(alpha)
    model.load_state_dict(state, strict=True)
    model.eval()
    return model.to(device)


def upscale_folder(model, folder="LR/*", out_dir="results"):
    for idx, path in enumerate(sorted(glob.glob(folder)), 1):
        base = osp.splitext(osp.basename(path))[0]
        print(idx, base)
        img = cv2.imread(path, cv2.IMREAD_COLOR) * 1.0 / 255
        img = torch.from_numpy(np.transpose(img[:, :, [2, 1, 0]], (2, 0, 1))).float()
        img_lr = img.unsqueeze(0).to(device)
        with torch.no_grad():
            output = model(img_lr).data.squeeze().float().cpu().clamp_(0, 1).numpy()
        output = np.transpose(output[[2, 1, 0], :, :], (1, 2, 0))
        cv2.imwrite(osp.join(out_dir, f"{base}_rlt.png"), (output * 255.0).round())


if __name__ == "__main__":
    import sys

    alpha = float(sys.argv[1]) if len(sys.argv) > 1 else None
    net = build_model(alpha)
    print(f"Model path {MODEL_PATH}. Testing...")
    upscale_folder(net)
