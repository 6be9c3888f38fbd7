# Source: https://github.com/seoungwugoh/STM/blob/44c5f8f64df1f0ba2f1bb96b81a25266f56bd5c2/eval_DAVIS.py
# Report: audited STM (space-time memory) video object segmentation evaluation: every Mem_every frames the new memory key/value is concatenated onto the whole previous memory with torch.cat, so memory and copying grow with the video length
# Shape: bounded-memory variant (as later STM successors do): memorised frames go into a deque(maxlen=...) and each frame builds its read memory with one torch.cat over that bounded window plus the current key; no tensor is concatenated onto itself
# Expect: near-miss: must be silent
from collections import deque

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import tqdm

from model import STM

torch.set_grad_enabled(False)


def Run_video(model, Fs, Ms, num_frames, num_objects, Mem_every=5, Mem_slots=8):
    to_memorize = [int(i) for i in np.arange(0, num_frames, step=Mem_every)]

    Es = torch.zeros_like(Ms)
    Es[:, :, 0] = Ms[:, :, 0]
    mem_keys = deque(maxlen=Mem_slots)
    mem_values = deque(maxlen=Mem_slots)
    for t in tqdm.tqdm(range(1, num_frames)):
        with torch.no_grad():
            prev_key, prev_value = model(Fs[:, :, t - 1], Es[:, :, t - 1], torch.tensor([num_objects]))

        this_keys = torch.cat(list(mem_keys) + [prev_key], dim=3)
        this_values = torch.cat(list(mem_values) + [prev_value], dim=3)

        with torch.no_grad():
            logit = model(Fs[:, :, t], this_keys, this_values, torch.tensor([num_objects]))
        Es[:, :, t] = F.softmax(logit, dim=1)

        if t - 1 in to_memorize:
            mem_keys.append(prev_key)
            mem_values.append(prev_value)

    pred = np.argmax(Es[0].cpu().numpy(), axis=0).astype(np.uint8)
    return pred, Es


def evaluate(test_loader, weights="STM_weights.pth"):
    model = nn.DataParallel(STM()).cuda()
    model.eval()
    model.load_state_dict(torch.load(weights, map_location="cuda:0"))
    results = {}
    for seq, V in enumerate(test_loader):
        Fs, Ms, num_objects, info = V
        num_frames = info["num_frames"][0].item()
        pred, _ = Run_video(model, Fs, Ms, num_frames, num_objects)
        results[info["name"][0]] = pred
    return results
