# Source: https://github.com/mahmoudnafifi/CIE_XYZ_NET/issues/2
# Report: the PyTorch demo converting a folder of images sRGB -> CIE XYZ -> sRGB ran the network without torch.no_grad(); on larger images it used unnecessary GPU memory; the author wrapped each call in no_grad (source also: fixed file: https://github.com/mahmoudnafifi/CIE_XYZ_NET/blob/872ecd918ee45b8a8aa3b1cadcb0519090bb7837/PyTorch/demo_images.py)
# Shape: the fixed demo: each of the three forward calls sits in its own `with torch.no_grad():`; the numpy conversion, clipping and cv2.imwrite stay outside the block
# Expect: near-miss: must be silent
import argparse
import logging
import os

import cv2
import numpy as np
import torch

from src import sRGB2XYZ
from src import utils


def get_args():
    parser = argparse.ArgumentParser(description="Converting from sRGB to CIE XYZ and back.")
    parser.add_argument("--model_dir", "-m", default="./models", dest="model_dir")
    parser.add_argument("--input_dir", "-i", default="../images/", dest="input_dir")
    parser.add_argument("--task", "-t", default="srgb-2-xyz-2-srgb", dest="task")
    parser.add_argument("--device", "-d", default="cuda", dest="device")
    return parser.parse_args()


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(levelname)s: %(message)s")
    args = get_args()
    device = torch.device("cuda" if args.device == "cuda" and torch.cuda.is_available() else "cpu")
    out_dir = {"xyz-rec": "../reconstructed_xyz", "re-rendered": "../re-rendered_srgb"}
    for d in out_dir.values():
        os.makedirs(d, exist_ok=True)

    ckpt = os.path.join(args.model_dir, "model_sRGB-XYZ-sRGB.pth")
    ciexyzNet = sRGB2XYZ.CIEXYZNet(device=device)
    ciexyzNet.to(device=device)
    ciexyzNet.load_state_dict(torch.load(ckpt, map_location=device))
    ciexyzNet.eval()

    imgfiles = [os.path.join(args.input_dir, fn) for fn in os.listdir(args.input_dir) if fn.lower().endswith((".jpg", ".png"))]
    for filename in imgfiles:
        logging.info(f"Processing image {filename}")
        in_img_tensor = utils.from_image_to_tensor(cv2.imread(filename)).to(device=device, dtype=torch.float32)
        name = os.path.splitext(os.path.basename(filename))[0]
        task = args.task.lower()
        if task == "srgb-2-xyz-2-srgb":
            with torch.no_grad():
                output_XYZ, output_sRGB = ciexyzNet(in_img_tensor)
            output_XYZ = utils.outOfGamutClipping(utils.from_tensor_to_image(output_XYZ, device=device))
            output_sRGB = utils.outOfGamutClipping(utils.from_tensor_to_image(output_sRGB, device=device))
            cv2.imwrite(os.path.join(out_dir["xyz-rec"], name + "_XYZ_reconstructed.png"), (output_XYZ * 65536).astype(np.uint16))
            cv2.imwrite(os.path.join(out_dir["re-rendered"], name + "_sRGB_re-rendered.png"), (output_sRGB * 255).astype(np.uint8))
        elif task == "srgb-2-xyz":
            with torch.no_grad():
                output_XYZ = ciexyzNet.forward_srgb2xyz(in_img_tensor)
            output_XYZ = utils.outOfGamutClipping(utils.from_tensor_to_image(output_XYZ, device=device))
            cv2.imwrite(os.path.join(out_dir["xyz-rec"], name + "_XYZ_reconstructed.png"), (output_XYZ * 65536).astype(np.uint16))
        else:
            with torch.no_grad():
                output_sRGB = ciexyzNet.forward_xyz2srgb(in_img_tensor)
            output_sRGB = utils.outOfGamutClipping(utils.from_tensor_to_image(output_sRGB, device=device))
            cv2.imwrite(os.path.join(out_dir["re-rendered"], name + "_sRGB_re-rendered.png"), (output_sRGB * 255).astype(np.uint8))
