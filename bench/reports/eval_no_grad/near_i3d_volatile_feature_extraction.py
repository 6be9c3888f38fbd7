# Source: https://github.com/Tushar-N/pytorch-resnet3d/issues/14
# Report: extracting I3D features clip by clip ran out of CUDA memory after a few calls; the inputs were wrapped in Variable(..., volatile=True), which has had no effect since PyTorch 0.4, so every forward built a graph
# Shape: fixed variant: the deprecated volatile Variable is dropped and the per-clip forward runs inside with torch.no_grad()
# Expect: near-miss: must be silent
import sys

import numpy as np
import torch

from models.resnet import i3_res50


def load_video_frames(path):
    frames = np.load(path)  # T x 3 x 224 x 224, float32
    return frames


def main(video_paths, out_dir, clip_len=16):
    i3d = i3_res50(400)
    i3d.cuda()
    i3d.train(False)  # Set model to evaluate mode

    def extract_clip_features(b_data):
        # b_data: 1 x 3 x 16 x 224 x 224
        b_data = torch.from_numpy(b_data).cuda().float()
        inp = {"frames": b_data}
        with torch.no_grad():
            features = i3d(inp)
        return features

    for path in video_paths:
        frames = load_video_frames(path)
        clip_feats = []
        for start in range(0, frames.shape[0] - clip_len + 1, clip_len):
            clip = frames[start:start + clip_len].transpose(1, 0, 2, 3)[None]
            features = extract_clip_features(np.ascontiguousarray(clip))
            clip_feats.append(features.cpu().numpy().reshape(-1))
        np.save(f"{out_dir}/{path.split('/')[-1]}.npy", np.stack(clip_feats))


if __name__ == "__main__":
    main(sys.argv[2:], sys.argv[1])
