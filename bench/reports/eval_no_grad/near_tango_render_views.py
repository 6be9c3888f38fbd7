# Source: https://github.com/Gorilla-Lab-SCUT/tango/issues/6
# Report: eval.py renders 100 views of the stylized mesh without torch.no_grad(); the reporter says GPU memory cannot hold it and asks to add no_grad (source also: code: https://github.com/Gorilla-Lab-SCUT/tango/blob/e01efa1354f271d82bbd5ca6a841c8ee7d572566/eval.py)
# Shape: the fix the issue asks for: the same eval()-then-render loop, with each render done under torch.no_grad() so no activations are saved
# Expect: near-miss: must be silent
import os
import argparse
from pathlib import Path

import numpy as np
import torch
import torchvision
from tqdm import tqdm

from neural_style_field import NeuralStyleField
from utils import get_normalize_mesh, save_gif, make_scene

CHANNELS = ("rgb", "normal1", "normal2", "roughness", "diffuse", "specular")


def build_model(args):
    model = NeuralStyleField(
        args.material_random_pe_numfreq,
        args.material_random_pe_sigma,
        args.num_lgt_sgs,
        args.max_delta_theta,
        args.max_delta_phi,
        args.width,
    )
    state_dict = torch.load(args.model_dir, map_location="cpu")
    model.load_state_dict(state_dict["model"])
    return model


def test(args):
    Path(args.output_dir).mkdir(parents=True, exist_ok=True)
    torch.manual_seed(args.seed)
    model = build_model(args)
    model.eval()
    model.cuda()
    scene = make_scene(get_normalize_mesh(args.obj_path))
    out_dirs = {name: os.path.join(args.output_dir, name) for name in CHANNELS}
    for d in out_dirs.values():
        os.makedirs(d, exist_ok=True)

    view_num = 100 if args.render_gif else 1
    azim = torch.linspace(0, 2 * np.pi, view_num)
    elev = torch.tensor(args.frontview_center[1])
    for i in tqdm(range(view_num)):
        with torch.no_grad():
            images = model.render_single_image(scene=scene, azim=azim[i], elev=elev)
        for name, img in zip(CHANNELS, images):
            path = os.path.join(out_dirs[name], f"iter_test_{name}_{i:03d}.jpg")
            torchvision.utils.save_image(img, path)
    if view_num > 1:
        for d in out_dirs.values():
            save_gif(d, 30)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_lgt_sgs", type=int, default=32)
    parser.add_argument("--max_delta_theta", type=float, default=1.5707)
    parser.add_argument("--max_delta_phi", type=float, default=1.5707)
    parser.add_argument("--material_random_pe_numfreq", type=int, default=0)
    parser.add_argument("--material_random_pe_sigma", type=float, default=20.0)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--obj_path", type=str, default="meshes/mesh1.obj")
    parser.add_argument("--output_dir", type=str, default="round2/alpha5")
    parser.add_argument("--frontview_center", nargs=2, type=float, default=[0.0, 0.0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model_dir", type=str, default=None)
    parser.add_argument("--render_gif", action="store_true")
    test(parser.parse_args())
