# Source: https://github.com/nkolot/SPIN/issues/76
# Report: running demo.py dies with "RuntimeError: CUDA error: out of memory" inside torch.load(args.checkpoint): the training checkpoint's tensors are restored onto the GPU they were saved from before load_state_dict copies them into the model (source note: demo.py at 277892a91e74af004c74457cd294bd102972f9b0)
# Shape: the checkpoint is loaded in a load_regressor helper and only its 'model' entry is used; the optimizer state in the same file lands on the GPU too
# Expect: TML011 line 41
import argparse
import json

import cv2
import numpy as np
import torch
from torchvision.transforms import Normalize

from models import hmr, SMPL
import config
import constants

parser = argparse.ArgumentParser()
parser.add_argument('--checkpoint', required=True, help='Path to pretrained checkpoint')
parser.add_argument('--img', type=str, required=True, help='Path to input image')
parser.add_argument('--bbox', type=str, default=None, help='Path to .json file with a bounding box')


def bbox_from_json(bbox_file):
    with open(bbox_file, 'r') as f:
        bbox = np.array(json.load(f)['bbox']).astype(np.float32)
    center = bbox[:2] + 0.5 * bbox[2:]
    return center, max(bbox[2], bbox[3]) / 200.0


def process_image(img_file, input_res=224):
    normalize_img = Normalize(mean=config.IMG_NORM_MEAN, std=config.IMG_NORM_STD)
    img = cv2.imread(img_file)[:, :, ::-1].copy()
    img = cv2.resize(img, (input_res, input_res)).astype(np.float32) / 255.
    img = torch.from_numpy(img).permute(2, 0, 1)
    return img, normalize_img(img.clone())[None]


def load_regressor(checkpoint_path, device):
    model = hmr(config.SMPL_MEAN_PARAMS).to(device)
    # the file also holds 'optimizer' and training state saved from cuda:0
    checkpoint = torch.load(checkpoint_path)  # expect: TML011
    model.load_state_dict(checkpoint['model'], strict=False)
    model.eval()
    return model


if __name__ == '__main__':
    args = parser.parse_args()
    device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')

    model = load_regressor(args.checkpoint, device)
    smpl = SMPL(config.SMPL_MODEL_DIR, batch_size=1, create_transl=False).to(device)

    img, norm_img = process_image(args.img, input_res=constants.IMG_RES)
    with torch.no_grad():
        pred_rotmat, pred_betas, pred_camera = model(norm_img.to(device))
        pred_output = smpl(betas=pred_betas, body_pose=pred_rotmat[:, 1:],
                           global_orient=pred_rotmat[:, 0].unsqueeze(1), pose2rot=False)
        pred_vertices = pred_output.vertices

    camera_translation = torch.stack(
        [pred_camera[:, 1], pred_camera[:, 2],
         2 * constants.FOCAL_LENGTH / (constants.IMG_RES * pred_camera[:, 0] + 1e-9)], dim=-1)
    np.save(args.img.split('.')[0] + '_verts.npy', pred_vertices[0].cpu().numpy())
    np.save(args.img.split('.')[0] + '_cam.npy', camera_translation[0].cpu().numpy())
