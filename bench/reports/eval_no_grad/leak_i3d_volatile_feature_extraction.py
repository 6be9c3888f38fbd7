# Source: https://github.com/Tushar-N/pytorch-resnet3d/issues/14
# Report: extracting I3D features clip by clip ran out of CUDA memory after a few calls; the inputs were wrapped in Variable(..., volatile=True), which has had no effect since PyTorch 0.4, so every forward built a graph
# Shape: model put in eval mode with train(False); a nested helper called once per 16-frame clip runs the forward with the ignored volatile flag and no grad-disabled context
# Expect: TML003 line 29
import sys

import numpy as np
import torch
from torch.autograd import Variable

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
        b_data = torch.from_numpy(b_data)
        b_data = Variable(b_data.cuda(), volatile=True).float()
        inp = {"frames": b_data}
        features = i3d(inp)  # expect: TML003
        return features

    for path in video_paths:
        frames = load_video_frames(path)
        clip_feats = []
        for start in range(0, frames.shape[0] - clip_len + 1, clip_len):
            clip = frames[start:start + clip_len].transpose(1, 0, 2, 3)[None]
            features = extract_clip_features(np.ascontiguousarray(clip))
            clip_feats.append(features.detach().cpu().numpy().reshape(-1))
        np.save(f"{out_dir}/{path.split('/')[-1]}.npy", np.stack(clip_feats))


if __name__ == "__main__":
    main(sys.argv[2:], sys.argv[1])
