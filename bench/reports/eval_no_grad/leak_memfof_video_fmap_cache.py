# Source: https://github.com/msu-video-group/memfof/issues/5
# Report: Running the multi-frame optical-flow model over a 1920x1080 video OOMs a 40 GB GPU; the reporter found the only difference was whether the loop ran under torch.inference_mode().
# Shape: after model.eval() the per-frame loop calls the model with grad enabled; the output dict's "fmap_cache" (encoder features with their graph) is fed back into the next call, so every triplet keeps refinement activations plus cached graph-attached feature maps.
# Expect: TML003 line 55; TML005 line 59
import os
import cv2
import numpy as np
import torch
import torch.nn as nn


class TinyMultiFrameFlow(nn.Module):
    """Stand-in for the 3-frame flow model: returns flows and a feature-map cache."""

    def __init__(self, dim=64):
        super().__init__()
        self.encoder = nn.Conv2d(3, dim, 7, stride=4, padding=3)
        self.corr = nn.Conv2d(3 * dim, dim, 3, padding=1)
        self.head = nn.Conv2d(dim, 4, 3, padding=1)

    def forward(self, frames, fmap_cache):
        fmaps = [c if c is not None else self.encoder(frames[:, i] / 255.0)
                 for i, c in enumerate(fmap_cache)]
        b, _, h, w = fmaps[0].shape
        coarse = self.head(torch.relu(self.corr(torch.cat(fmaps, dim=1))))
        fine = coarse + self.head(torch.relu(self.corr(torch.cat(fmaps, dim=1))))
        flows = [coarse.view(b, 2, 2, h, w), fine.view(b, 2, 2, h, w)]
        return {"flow": flows, "fmap_cache": fmaps}


def flow_to_uint8(flow, bound=25.0):
    flow = np.clip(flow, -bound, bound)
    return ((flow + bound) / (2 * bound) * 255).astype(np.uint8)


def process_video(video_path, out_dir, device="cuda"):
    os.makedirs(out_dir, exist_ok=True)
    model = TinyMultiFrameFlow().to(device)
    model.load_state_dict(torch.load("memfof_tartan.pth", map_location=device))
    model.eval()

    cap = cv2.VideoCapture(video_path)
    frames, fmap_cache, idx = [], [None] * 3, 0
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        frame = torch.tensor(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB), dtype=torch.float32)
        frame = frame.permute(2, 0, 1).unsqueeze(0)
        if not frames:
            frames.append(frame)
        frames.append(frame)
        if len(frames) != 3:
            continue
        output = model(torch.stack(frames, dim=1).to(device), fmap_cache=fmap_cache)  # expect: TML003
        fw = output["flow"][-1][:, 1].squeeze(0).permute(1, 2, 0).cpu().numpy()
        cv2.imwrite(os.path.join(out_dir, f"{idx:06d}.png"), flow_to_uint8(fw)[..., ::-1])
        idx += 1
        fmap_cache = output["fmap_cache"]  # expect: TML005
        fmap_cache.pop(0)
        fmap_cache.append(None)
        frames.pop(0)
    cap.release()
