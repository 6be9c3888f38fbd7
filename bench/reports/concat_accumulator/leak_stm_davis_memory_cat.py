# Source: https://github.com/seoungwugoh/STM/blob/44c5f8f64df1f0ba2f1bb96b81a25266f56bd5c2/eval_DAVIS.py
# Report: audited STM (space-time memory) video object segmentation evaluation: every Mem_every frames the new memory key/value is concatenated onto the whole previous memory with torch.cat, so memory and copying grow with the video length
# Shape: Run_video keeps the STM names; the memory travels through an intermediate name (this_keys = torch.cat([keys, prev_key]) then keys = this_keys), so each memorised frame re-copies the full, ever-growing key/value bank
# Expect: TML008 line 34; TML008 line 35
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import tqdm

from model import STM

torch.set_grad_enabled(False)


def Run_video(model, Fs, Ms, num_frames, num_objects, Mem_every=None, Mem_number=None):
    if Mem_every:
        to_memorize = [int(i) for i in np.arange(0, num_frames, step=Mem_every)]
    elif Mem_number:
        to_memorize = [int(round(i)) for i in np.linspace(0, num_frames, num=Mem_number + 2)[:-1]]
    else:
        raise NotImplementedError

    Es = torch.zeros_like(Ms)
    Es[:, :, 0] = Ms[:, :, 0]
    keys, values = None, None
    for t in tqdm.tqdm(range(1, num_frames)):
        with torch.no_grad():
            prev_key, prev_value = model(Fs[:, :, t - 1], Es[:, :, t - 1], torch.tensor([num_objects]))

        if t - 1 == 0:
            this_keys, this_values = prev_key, prev_value
        else:
            this_keys = torch.cat([keys, prev_key], dim=3)  # expect: TML008
            this_values = torch.cat([values, prev_value], dim=3)  # expect: TML008

        with torch.no_grad():
            logit = model(Fs[:, :, t], this_keys, this_values, torch.tensor([num_objects]))
        Es[:, :, t] = F.softmax(logit, dim=1)

        if t - 1 in to_memorize:
            keys, values = this_keys, this_values

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
        pred, _ = Run_video(model, Fs, Ms, num_frames, num_objects, Mem_every=5)
        results[info["name"][0]] = pred
    return results
